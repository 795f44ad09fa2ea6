# frozen_string_literal: true

require "test_helper"
require "async/barrier"
require "net/http"
require "heron/metrics"

# Behaviour of one reactor: errors, timeouts, limits and concurrency.
class ReactorThreadTest < Minitest::Test
  OK = ->(_env) { [200, { "content-type" => "text/plain" }, ["ok"]] }

  def test_app_exception_is_a_500_with_logged_backtrace_and_server_keeps_serving
    app = lambda do |env|
      raise ArgumentError, "boom in app" if env["PATH_INFO"] == "/boom"
      OK.call(env)
    end
    with_server(app) do |port|
      response = raw_request(port, "GET /boom HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_match(/\AHTTP\/1.1 500 Internal Server Error\r\n/, response)
      assert response.end_with?("\r\n\r\nInternal Server Error\n"), "short body, no backtrace to the client"
      assert_match(/ArgumentError: boom in app|boom in app \(ArgumentError\)/, server_log)
      assert_match(/reactor_thread_test\.rb:\d+/, server_log, "backtrace is logged")
      assert_equal "ok", Net::HTTP.get(URI("http://127.0.0.1:#{port}/fine"))
    end
  end

  def test_silent_client_is_dropped_after_first_byte_timeout
    with_server(OK, first_byte_timeout: 0.2) do |port|
      socket = connect(port)
      assert closed_by_server?(socket, timeout: 3)
    end
  end

  def test_slow_headers_get_408_after_header_timeout
    with_server(OK, header_timeout: 0.3) do |port|
      socket = connect(port)
      socket.write("GET / HTTP/1.1\r\n")
      sleep 0.1
      socket.write("Host: x\r\n")
      assert_match(/\AHTTP\/1.1 408 /, read_all(socket))
    end
  end

  def test_idle_keepalive_connection_is_closed
    with_server(OK, keepalive_timeout: 0.2) do |port|
      socket = connect(port)
      socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_equal 200, read_response(socket)[0]
      assert closed_by_server?(socket, timeout: 3)
    end
  end

  def test_connections_beyond_max_wait_in_the_backlog
    release = Queue.new
    app = lambda do |env|
      release.pop if env["PATH_INFO"] == "/hold"
      OK.call(env)
    end
    with_server(app, max_connections: 1) do |port, server|
      holder = connect(port)
      holder.write("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n")
      waiting = connect(port)
      waiting.write("GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
      refute waiting.wait_readable(0.3), "second connection is not served while the first holds the slot"
      assert_equal 1, server.connection_count
      release << true
      assert_equal 200, read_response(holder)[0]
      holder.close
      assert_equal 200, read_response(waiting)[0]
    end
  end

  # Each request waits (up to 5 s, yielding) until all ten are inside the app. A server that
  # queues requests behind busy workers never gets them all in at once, so its peak stays lower.
  def test_slow_requests_overlap_instead_of_queueing
    in_flight = 0
    peak = 0
    app = lambda do |env|
      in_flight += 1
      peak = [peak, in_flight].max
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 5
      sleep 0.01 until peak == 10 || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      in_flight -= 1
      OK.call(env)
    end
    with_server(app) do |port|
      threads = 10.times.map { Thread.new { Net::HTTP.get(URI("http://127.0.0.1:#{port}/")) } }
      assert_equal ["ok"] * 10, threads.map(&:value)
    end
    assert_equal 10, peak, "all ten sleeping requests were in the app at once"
  end

  def test_reports_connections_requests_queue_time_and_callbacks_to_the_metrics_registry
    metrics = Heron::Metrics.new(live_gc: false)
    app = lambda do |env|
      env["rack.after_reply"] << -> {} if env["PATH_INFO"] == "/later"
      status = env["PATH_INFO"] == "/missing" ? 404 : 200
      [status, { "content-type" => "text/plain" }, ["x"]]
    end
    with_server(app, metrics: metrics) do |port|
      socket = connect(port)
      %w[/a /later /missing].each do |path|
        socket.write("GET #{path} HTTP/1.1\r\nHost: x\r\n\r\n")
        read_response(socket)
      end
      socket.close
      eventually { metrics.value("connections_open").zero? && metrics.value("after_reply_total") == 1 }
    end
    snapshot = metrics.snapshot
    assert_equal 1, snapshot["counters"]["connections_total"]
    assert_equal({ "connections_open" => 0, "requests_in_flight" => 0, "after_reply_backlog" => 0 }, snapshot["gauges"])
    assert_equal [2, 1], snapshot["requests"].values_at("2xx", "4xx")
    assert_equal 3, snapshot["queue"]["counts"].sum, "every request's queue time is observed"
  end

  def test_async_fan_out_inside_a_request_runs_concurrently
    app = lambda do |_env|
      barrier = Async::Barrier.new
      order = []
      [0.2, 0.1, 0.0].each { |delay| barrier.async { sleep delay; order << delay } }
      barrier.wait
      [200, { "content-type" => "text/plain" }, [order.join(",")]]
    end
    with_server(app) do |port|
      assert_equal "0.0,0.1,0.2", Net::HTTP.get(URI("http://127.0.0.1:#{port}/"))
    end
  end
end
