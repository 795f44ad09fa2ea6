# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "heron/profiler/metrics"

class MetricsAggregateTest < Minitest::Test
  def setup
    # Other tests in this process may hold SQLite connections; these forks never touch them.
    SQLite3::ForkSafety.suppress_warnings! if defined?(SQLite3::ForkSafety)
    @path = Dir.mktmpdir("heron-aggregate-test")
    @directory = Heron::Profiler::Metrics::SnapshotDirectory.new(@path)
    @master = Heron::Profiler::Metrics.new
  end

  def teardown
    FileUtils.rm_rf(@path)
  end

  def test_sums_the_master_and_every_forked_worker
    pids = [200, 404].map { |status| fork_worker(status) }
    pids.each { |pid| Process.wait(pid) }
    @master.worker_restarted
    snapshot = Heron::Profiler::Metrics::Aggregate.new(@master, @directory).snapshot
    assert_equal 3, snapshot["requests"]["2xx"]
    assert_equal 3, snapshot["requests"]["4xx"]
    assert_equal 1, snapshot["counters"]["worker_restarts_total"]
    assert_equal 3, snapshot["processes"]
  end

  def test_totals_survive_a_retired_worker
    Process.wait(fork_worker(200))
    aggregate = Heron::Profiler::Metrics::Aggregate.new(@master, @directory)
    before = aggregate.snapshot["requests"]["2xx"]
    @directory.retire(@directory.snapshots.first["pid"], @master)
    assert_equal before, aggregate.snapshot["requests"]["2xx"]
    assert_equal 1, aggregate.snapshot["processes"]
    assert_includes aggregate.to_prometheus, %(heron_requests_total{status="2xx"} 3\n)
  end

  private

  def fork_worker(status)
    fork do
      metrics = Heron::Profiler.reset_metrics
      3.times { metrics.request_started; metrics.request_finished(status, 0.01) }
      @directory.publish(metrics, times: 1)
      exit!(0)
    end
  end
end
