# frozen_string_literal: true

require "test_helper"

# Server::ConnectionWorkers: jobs run at the loop's next turn, in reused fibers, and only MAX_IDLE
# workers stay.
class ConnectionWorkersTest < Minitest::Test
  def test_a_job_runs_at_the_next_turn_and_the_next_reuses_the_idle_workers_fiber
    fibers = []
    Sync do |task|
      workers = Heron::Server::ConnectionWorkers.new(task)
      workers.run { fibers << Fiber.current }
      assert_empty fibers, "#run does not switch to the job"
      task.yield
      assert_equal 1, fibers.size, "ran at the loop's next turn"
      assert_equal 1, workers.idle
      workers.run { fibers << Fiber.current }
      assert_equal 1, fibers.size, "#run does not switch to an idle worker either (its wake-up is queued)"
      task.yield
      assert_equal 1, workers.idle
      task.children.each(&:stop)
    end
    assert_equal 1, fibers.uniq.size
  end

  # A graceful stop stops the tasks of idle connections, and one may be an idle worker that was
  # just handed a job (a parked connection's wake-up): the job must still run, or that connection
  # is neither served nor closed and the stop waits for it until shutdown_timeout.
  def test_a_job_handed_to_an_idle_worker_that_is_stopped_runs_in_another
    ran = []
    Sync do |task|
      workers = Heron::Server::ConnectionWorkers.new(task)
      worker = nil
      workers.run { worker = Async::Task.current }
      task.yield
      assert_equal 1, workers.idle
      workers.run { ran << Async::Task.current }
      worker.stop
      2.times { task.yield }
      task.children.each(&:stop)
    end
    assert_equal 1, ran.size, "the job ran"
  end

  def test_busy_workers_mean_new_workers_and_at_most_max_idle_stay
    max = Heron::Server::ConnectionWorkers::MAX_IDLE
    Sync do |task|
      workers = Heron::Server::ConnectionWorkers.new(task)
      gate = Async::Condition.new
      fibers = Array.new(max + 10) { [].tap { |seen| workers.run { seen << Fiber.current && gate.wait } } }
      assert_empty fibers.flatten, "#run does not switch to a new worker either"
      per_turn = Heron::Server::ConnectionWorkers::STARTS_PER_TURN
      2.times { task.yield } # new workers start at the next turn, their jobs run at the one after
      assert_equal per_turn, fibers.flatten.uniq.size, "STARTS_PER_TURN workers start in one turn"
      ((max + 10) / per_turn * 2).times { task.yield }
      assert_equal max + 10, fibers.flatten.uniq.size, "the rest at the next turns; a job waiting holds its worker"
      gate.signal
      sleep 0.01
      assert_equal max, workers.idle
      task.children.each(&:stop)
    end
  end

  # Requests that wait long in their app (1 s sleeps at 5,000/s) keep thousands of workers
  # busy; the ones due together end together, and as many new requests come soon after. The
  # workers that ended then wait idle for them (one per IDLE_PER_BUSY busy), instead of all but
  # MAX_IDLE ending and as many being started again.
  def test_with_many_workers_busy_a_burst_of_ended_jobs_leaves_its_workers_for_the_next_burst
    busy = 1000
    burst = 100
    started = []
    Sync do |task|
      workers = Heron::Server::ConnectionWorkers.new(task)
      early = Async::Condition.new
      late = Async::Condition.new
      busy.times { |i| workers.run { started << Fiber.current && (i < burst ? early : late).wait } }
      task.yield until started.size == busy
      early.signal
      task.yield until workers.idle >= [burst, Heron::Server::ConnectionWorkers::MAX_IDLE].min
      2.times { task.yield }
      ran = []
      burst.times { workers.run { ran << Fiber.current } }
      task.yield until ran.size == burst
      new_workers = (ran - started).uniq.size
      assert_equal 0, new_workers, "workers started for the second burst (#{busy - burst} still busy)"
      task.children.each(&:stop)
    end
  end

  # A burst of new connections that park until their first bytes: each job ends without
  # waiting, and workers take the next pending job instead of one worker (and fiber) each.
  def test_jobs_that_end_without_waiting_share_workers
    fibers = []
    Sync do |task|
      workers = Heron::Server::ConnectionWorkers.new(task)
      500.times { workers.run { fibers << Fiber.current } }
      3.times { task.yield }
      task.children.each(&:stop)
    end
    assert_equal 500, fibers.size
    assert_operator fibers.uniq.size, :<=, Heron::Server::ConnectionWorkers::STARTS_PER_TURN
  end

  def test_a_worker_whose_job_left_a_task_behind_is_not_reused
    Sync do |task|
      workers = Heron::Server::ConnectionWorkers.new(task)
      gate = Async::Condition.new
      left = nil
      workers.run { Async::Task.current.async { |child| (left = child) && gate.wait } }
      sleep 0.01 # the job ends once its child waits
      assert_equal 0, workers.idle, "it ends once its own job is done, leaving its child running"
      assert left.running?
    ensure
      gate.signal
      task.children.each(&:stop)
    end
  end

  # Thread.current[] is fiber-local: a reused worker must not hand one client's values (an app's
  # current user, say) to the next connection, which before workers always got a fresh fiber.
  def test_a_reused_worker_starts_each_job_without_the_last_jobs_fiber_locals
    first = seen = nil
    Sync do |task|
      workers = Heron::Server::ConnectionWorkers.new(task)
      workers.run { (first = Fiber.current) && Thread.current[:user] = "alice" }
      sleep 0.01
      workers.run { seen = [Fiber.current, Thread.current[:user], Thread.current.keys] }
      sleep 0.01
      task.children.each(&:stop)
    end
    assert_equal [first, nil, []], seen, "the same fiber, without the first job's locals"
  end
end
