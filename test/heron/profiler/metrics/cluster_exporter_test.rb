# frozen_string_literal: true

require "test_helper"
require "heron/profiler/metrics/cluster_exporter"

class MetricsClusterExporterTest < Minitest::Test
  def setup
    # Other tests in this process may hold SQLite connections; these forks never touch them.
    SQLite3::ForkSafety.suppress_warnings! if defined?(SQLite3::ForkSafety)
    config = Heron::Configuration.new
    @exporter = Heron::Profiler::Metrics::ClusterExporter.new(config, local: Heron::Profiler::Metrics.new,
                                                                      interval: 0.05)
  end

  def teardown
    @exporter.stop
  end

  def test_master_serves_the_total_of_forked_workers_and_keeps_dead_workers_counts
    @exporter.start
    pids = [2, 3].map { |requests| fork_worker(requests) }
    pids.each { |pid| Process.wait(pid) }
    assert_includes scrape, %(heron_requests_total{status="2xx"} 5\n)
    assert_includes scrape, "heron_processes 3\n"
    @exporter.local.worker_restarted
    pids.each { |pid| assert @exporter.worker_exited(pid) }
    text = scrape
    assert_includes text, %(heron_requests_total{status="2xx"} 5\n), "totals do not go backwards"
    assert_includes text, "heron_processes 1\n"
    assert_includes text, "heron_worker_restarts_total 1\n"
  end

  def test_a_running_worker_publishes_periodically
    reader, writer = IO.pipe
    pid = fork do
      reader.close
      metrics = @exporter.worker_started
      metrics.connection_opened
      writer.close
      sleep
    end
    writer.close
    reader.read
    Timeout.timeout(5) { sleep 0.02 until @exporter.directory.snapshots.any? { |s| s["gauges"]["connections_open"] == 1 } }
  ensure
    Process.kill("KILL", pid)
    Process.wait(pid)
  end

  def test_stop_removes_the_directory_and_aggregate_needs_start
    assert_nil @exporter.aggregate
    @exporter.stop
    refute File.exist?(@exporter.directory.path)
  end

  private

  def fork_worker(requests)
    fork do
      metrics = @exporter.worker_started
      requests.times { metrics.request_started; metrics.request_finished(200, 0.01) }
      @exporter.worker_stopped(metrics)
      exit!(0)
    end
  end

  def scrape
    @exporter.aggregate.to_prometheus
  end
end
