# frozen_string_literal: true

require "test_helper"

# Server::ConnectionWorkers: jobs run at once, in reused fibers, and only MAX_IDLE workers stay.
class ConnectionWorkersTest < Minitest::Test
  def test_a_job_runs_at_once_and_the_next_reuses_the_idle_workers_fiber
    fibers = []
    Sync do |task|
      workers = Heron::Server::ConnectionWorkers.new(task)
      workers.run { fibers << Fiber.current }
      assert_equal 1, fibers.size, "ran before #run returned"
      assert_equal 1, workers.idle
      workers.run { fibers << Fiber.current }
      assert_equal 1, workers.idle
      task.children.each(&:stop)
    end
    assert_equal 1, fibers.uniq.size
  end

  def test_busy_workers_mean_new_workers_and_at_most_max_idle_stay
    max = Heron::Server::ConnectionWorkers::MAX_IDLE
    Sync do |task|
      workers = Heron::Server::ConnectionWorkers.new(task)
      gate = Async::Condition.new
      fibers = Array.new(max + 10) { [].tap { |seen| workers.run { seen << Fiber.current && gate.wait } } }
      assert_equal max + 10, fibers.flatten.uniq.size, "a job waiting holds its worker"
      gate.signal
      sleep 0.01
      assert_equal max, workers.idle
      task.children.each(&:stop)
    end
  end
end
