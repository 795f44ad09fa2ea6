# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "heron/metrics"

class MetricsAggregateTest < Minitest::Test
  def setup
    # Other tests in this process may hold SQLite connections; these forks never touch them.
    SQLite3::ForkSafety.suppress_warnings! if defined?(SQLite3::ForkSafety)
    @path = Dir.mktmpdir("heron-aggregate-test")
    @directory = Heron::Metrics::SnapshotDirectory.new(@path)
    @master = Heron::Metrics.new
  end

  def teardown
    FileUtils.rm_rf(@path)
  end

  def test_sums_the_master_and_every_forked_worker
    pids = [200, 404].map { |status| fork_worker(status) }
    pids.each { |pid| Process.wait(pid) }
    @master.worker_restarted
    snapshot = Heron::Metrics::Aggregate.new(@master, @directory).snapshot
    assert_equal 3, snapshot["requests"]["2xx"]
    assert_equal 3, snapshot["requests"]["4xx"]
    assert_equal 1, snapshot["counters"]["worker_restarts_total"]
    assert_equal 3, snapshot["processes"]
  end

  def test_prometheus_has_one_series_per_process_labelled_by_worker
    [[200, 0], [404, 1]].each { |status, index| Process.wait(fork_worker(status, index)) }
    @master.worker_restarted
    text = Heron::Metrics::Aggregate.new(@master, @directory).to_prometheus
    assert_includes text, %(heron_requests_total{worker="0",status="2xx"} 3\n)
    assert_includes text, %(heron_requests_total{worker="1",status="4xx"} 3\n)
    assert_includes text, %(heron_requests_total{worker="master",status="2xx"} 0\n)
    assert_includes text, %(heron_worker_restarts_total{worker="master"} 1\n)
    assert_equal 3, text.scan(/^process_resident_memory_bytes\{worker="[^"]+"\} [1-9]\d*$/).size
    assert_includes text, "heron_processes 3\n"
  end

  def test_a_dead_workers_leftover_file_never_doubles_a_series
    Process.wait(fork_worker(200, 0))
    old = @directory.snapshots.first
    @directory.write(old.merge("pid" => 1, "process" => old["process"].merge("start_time_seconds" => 1.0)), pid: 1)
    text = Heron::Metrics::Aggregate.new(@master, @directory).to_prometheus
    assert_equal 1, text.scan(/^heron_requests_total\{worker="0",status="2xx"\}/).size
  end

  private

  def fork_worker(status, index = nil)
    fork do
      metrics = Heron::Metrics.reset(worker: index)
      3.times { metrics.request_started; metrics.request_finished(status, 0.01) }
      @directory.publish(metrics, times: 1)
      exit!(0)
    end
  end
end
