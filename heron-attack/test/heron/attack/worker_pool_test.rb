# frozen_string_literal: true

require "test_helper"
require "heron/attack"

class WorkerPoolTest < Minitest::Test
  def test_reuses_idle_workers
    done = []
    Sync do |task|
      pool = Heron::Attack::WorkerPool.new(nil) { |index, due| done << [index, due] }
      5.times { |i| pool.dispatch(task, i, i * 0.1) }
      assert_equal 1, pool.size, "each job finished before the next, so one worker did them all"
      pool.stop
    end
    assert_equal [[0, 0.0], [1, 0.1], [2, 0.2], [3, 0.30000000000000004], [4, 0.4]], done
  end

  def test_grows_while_workers_are_busy
    Sync do |task|
      pool = Heron::Attack::WorkerPool.new(nil) { sleep 0.05 }
      3.times { |i| pool.dispatch(task, i, 0.0) }
      assert_equal 3, pool.size
      pool.stop
      assert_equal 0, pool.size
    end
  end

  def test_limit_makes_dispatch_wait_for_a_free_worker
    running = 0
    peak = 0
    Sync do |task|
      pool = Heron::Attack::WorkerPool.new(2) do
        running += 1
        peak = [peak, running].max
        sleep 0.02
        running -= 1
      end
      6.times { |i| pool.dispatch(task, i, 0.0) }
      sleep 0.1
      assert_equal 2, pool.size
      pool.stop
    end
    assert_equal 2, peak
  end

  def test_handing_a_request_to_an_idle_worker_allocates_fewer_than_four_objects
    allocated = nil
    Sync do |task|
      pool = Heron::Attack::WorkerPool.new(nil) { nil }
      pool.dispatch(task, 0, 0.0)
      before = GC.stat(:total_allocated_objects)
      100.times { |i| pool.dispatch(task, i, 0.0) }
      allocated = (GC.stat(:total_allocated_objects) - before) / 100.0
      pool.stop
    end
    assert_operator allocated, :<, 4, "the request's [index, due] and the scheduler's argument lists"
  end
end
