# frozen_string_literal: true

require "test_helper"
require "async"
require "tmpdir"
require "heron/profiler/metrics_server"

class MetricsServerTest < Minitest::Test
  def setup
    @metrics = Heron::Profiler::Metrics.new
    @metrics.connection_opened
    @metrics.request_started
    @metrics.request_finished(200, 0.004, 0.0003)
    @server = Heron::Profiler::MetricsServer.new(config("tcp://127.0.0.1:0"), @metrics).bind
  end

  def teardown
    @server.close
  end

  def test_scrape_over_tcp_from_a_thread_returns_parsable_text_format
    status, headers, body = in_thread { scrape("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n") }
    assert_equal 200, status
    assert_equal "text/plain; version=0.0.4; charset=utf-8", headers["content-type"]
    samples = parse(body)
    assert_equal 1, samples[["heron_requests_total", { "status" => "2xx" }]]
    assert_equal 1, samples[["heron_connections_open", {}]]
    assert_equal 1, samples[["heron_request_duration_seconds_bucket", { "status" => "2xx", "le" => "+Inf" }]]
    assert_operator samples[["heron_gc_count_total", {}]], :>, 0
  end

  def test_serves_inside_an_async_task_without_blocking_the_reactor
    ticks = 0
    Async do |task|
      serving = task.async { @server.run }
      ticker = task.async { loop { ticks += 1; sleep 0.01 } }
      status, = Thread.new { scrape("GET /metrics HTTP/1.0\r\n\r\n") }.value
      assert_equal 200, status
      @server.close
      serving.wait
      ticker.stop
    end
    assert_operator ticks, :>, 0
  end

  def test_other_paths_methods_and_head
    in_thread do
      assert_equal 404, scrape("GET / HTTP/1.1\r\n\r\n").first
      assert_equal 405, scrape("POST /metrics HTTP/1.1\r\n\r\n").first
      assert_equal 400, scrape("\r\n\r\n").first
      status, headers, body = scrape("HEAD /metrics?x=1 HTTP/1.1\r\n\r\n", head: true)
      assert_equal [200, ""], [status, body]
      assert_operator headers["content-length"].to_i, :>, 0
    end
  end

  def test_a_client_that_never_sends_a_request_is_dropped
    stub_const(:READ_TIMEOUT, 0.1) do
      in_thread do
        socket = TCPSocket.new("127.0.0.1", @server.port)
        assert_match(/\AHTTP\/1.1 400/, socket.read)
        assert_equal 200, scrape("GET /metrics HTTP/1.1\r\n\r\n").first
      end
    end
  end

  def test_a_client_that_hangs_up_at_once_does_not_stop_the_server
    in_thread do
      TCPSocket.new("127.0.0.1", @server.port).close
      assert_equal 200, scrape("GET /metrics HTTP/1.1\r\n\r\n").first
    end
  end

  def test_port_and_close_before_bind
    server = Heron::Profiler::MetricsServer.new(config("tcp://127.0.0.1:0"), @metrics)
    assert_nil server.port
    server.close
    server.run
  end

  def test_address_in_use_is_a_clear_error
    error = assert_raises(Heron::Profiler::MetricsServer::BindError) do
      Heron::Profiler::MetricsServer.new(config("tcp://127.0.0.1:#{@server.port}"), @metrics).bind
    end
    assert_match(/already in use/, error.message)
    assert_kind_of Heron::ConfigError, error
  end

  def test_unknown_scheme_is_a_clear_error
    error = assert_raises(Heron::Profiler::MetricsServer::BindError) do
      Heron::Profiler::MetricsServer.new(Struct.new(:metrics_bind).new("http://127.0.0.1:1"), @metrics).bind
    end
    assert_match(%r{tcp://host:port}, error.message)
  end

  def test_unix_socket_and_run_binds_on_its_own
    path = File.join(Dir.mktmpdir("heron-metrics"), "metrics.sock")
    server = Heron::Profiler::MetricsServer.new(config("unix://#{path}"), @metrics)
    thread = Thread.new { server.run }
    Timeout.timeout(5) { sleep 0.01 until File.socket?(path) }
    assert_nil server.port
    socket = UNIXSocket.new(path)
    socket.write("GET /metrics HTTP/1.1\r\n\r\n")
    assert_equal 200, read_response(socket).first
  ensure
    server.close
    thread.join(5)
    refute File.exist?(path)
  end

  private

  def config(bind)
    Heron::Configuration.new(metrics_bind: bind)
  end

  def in_thread
    thread = Thread.new { @server.run }
    yield
  ensure
    @server.close
    thread.join(5) || flunk("metrics server did not stop")
  end

  def scrape(request, head: false)
    socket = TCPSocket.new("127.0.0.1", @server.port)
    socket.write(request)
    read_response(socket, head: head)
  ensure
    socket&.close
  end

  def stub_const(name, value)
    klass = Heron::Profiler::MetricsServer
    old = klass.send(:remove_const, name)
    klass.const_set(name, value)
    yield
  ensure
    klass.send(:remove_const, name)
    klass.const_set(name, old)
  end

  # A strict-enough reader of the text format: every sample line must parse and follow a TYPE.
  def parse(body)
    typed = {}
    body.each_line.each_with_object({}) do |line, samples|
      next typed[$1] = $2 if line =~ /\A# TYPE (\S+) (counter|gauge|histogram)\n\z/
      next if line.start_with?("# HELP ")
      match = line.match(/\A([a-z_]+)(?:\{(.*)\})? (\S+)\n\z/) or flunk("bad line #{line.inspect}")
      assert typed.key?(match[1].sub(/_(bucket|sum|count)\z/, "")) || typed.key?(match[1]), "untyped #{match[1]}"
      labels = match[2].to_s.scan(/([a-z]+)="((?:[^"\\]|\\.)*)"/).to_h
      samples[[match[1], labels]] = Float(match[3])
    end
  end
end
