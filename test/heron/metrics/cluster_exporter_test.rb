# frozen_string_literal: true

require "test_helper"
require "heron/metrics/cluster_exporter"

class MetricsClusterExporterTest < Minitest::Test
  def setup
    # Other tests in this process may hold SQLite connections; these forks never touch them.
    SQLite3::ForkSafety.suppress_warnings! if defined?(SQLite3::ForkSafety)
    config = Heron::Configuration.new
    @exporter = Heron::Metrics::ClusterExporter.new(config, local: Heron::Metrics.new,
                                                                      interval: 0.05)
  end

  def teardown
    @exporter.stop
  end

  def test_master_serves_each_workers_series_and_drops_dead_ones
    @exporter.start
    pids = [[2, 0], [3, 1]].map { |requests, index| fork_worker(requests, index) }
    pids.each { |pid| Process.wait(pid) }
    text = scrape
    assert_includes text, %(heron_requests_total{worker="0",status="2xx"} 2\n)
    assert_includes text, %(heron_requests_total{worker="1",status="2xx"} 3\n)
    assert_includes text, "heron_processes 3\n"
    @exporter.local.worker_restarted
    pids.each { |pid| assert @exporter.worker_exited(pid) }
    text = scrape
    refute_match(/worker="[01]"/, text)
    assert_includes text, "heron_processes 1\n"
    assert_includes text, %(heron_worker_restarts_total{worker="master"} 1\n)
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
    Timeout.timeout(ProcessHelper::PATIENCE) { sleep 0.02 until @exporter.directory.snapshots.any? { |s| s["gauges"]["connections_open"] == 1 } }
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

  def fork_worker(requests, index)
    fork do
      metrics = @exporter.worker_started(index)
      requests.times { metrics.request_started; metrics.request_finished(200, 0.01) }
      @exporter.worker_stopped(metrics)
      exit!(0)
    end
  end

  def scrape
    @exporter.aggregate.to_prometheus
  end
end

# A real `heron -w 2` scraped over HTTP: every worker's series under its own label.
class MetricsClusterScrapeTest < Minitest::Test
  def test_a_cluster_labels_each_workers_series
    metrics_port = TCPServer.open("127.0.0.1", 0) { |server| server.addr[1] }
    pid, port, log = spawn_heron(%(run ->(env) { [200, {}, ["ok"]] }\n), "-w", "2", "--metrics",
                                 "--metrics-bind", "tcp://127.0.0.1:#{metrics_port}")
    raw_request(port, "GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    text = eventually do # workers publish about once a second
      scraped = raw_request(metrics_port, "GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
      scraped if served(scraped).size == 2 && served(scraped).sum == 1
    end
    assert_match(/^process_resident_memory_bytes\{worker="0"\} \d/, text)
    assert_match(/^process_start_time_seconds\{worker="master"\} \d/, text)
    assert_match(/^heron_build_info\{version="#{Regexp.escape(Heron::VERSION)}"/, text)
    assert_includes File.read(log), "worker="
  ensure
    stop_heron(pid)
  end

  private

  # @return [Array<Integer>] each worker's count of 2xx answers.
  def served(text)
    text.scan(/^heron_requests_total\{worker="[01]",status="2xx"\} (\d+)$/).flatten.map(&:to_i)
  end
end
