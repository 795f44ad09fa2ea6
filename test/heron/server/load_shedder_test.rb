# frozen_string_literal: true

require "test_helper"
require_relative "../../support/http2_client"

# Load shedding over real sockets: past max_in_flight or max_queue_time a request is answered
# 503 with Retry-After at once, and the app never sees it.
class LoadShedderTest < Minitest::Test
  def setup
    @entered = Queue.new
    @release = Queue.new
    @calls = []
    @app = lambda do |env|
      @calls << env["PATH_INFO"]
      if env["PATH_INFO"] == "/hold"
        @entered << true
        @release.pop
      elsif env["PATH_INFO"] == "/spin" # holds the reactor without yielding
        @entered << true
        deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 0.5
        nil while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
      end
      [200, { "content-type" => "text/plain" }, ["ok"]]
    end
  end

  def test_past_max_in_flight_the_request_gets_503_with_retry_after_without_the_app
    with_server(@app, max_in_flight: 2) do |port|
      held = Array.new(2) { Thread.new { get(port, "/hold") } }
      2.times { Timeout.timeout(ProcessHelper::PATIENCE) { @entered.pop } }
      status, headers, body = get(port, "/shed-me")
      assert_equal [503, "1", "max_in_flight"], [status, headers["retry-after"], headers["x-heron-shed"]]
      assert_match(/max_in_flight/, body)
      refute_includes @calls, "/shed-me"
      2.times { @release << true }
      assert_equal [200, 200], held.map { |thread| thread.value.first }
      assert_equal 200, get(port, "/after").first
    end
  end

  def test_http2_streams_past_max_in_flight_get_503_and_the_count_stays_right
    with_server(@app, max_in_flight: 2) do |port, server|
      client = HTTP2TestClient.new(connect(port))
      held = Array.new(2) { client.request("GET", "/hold") }
      reader = Thread.new { client.wait(*held, timeout: 10) }
      2.times { Timeout.timeout(ProcessHelper::PATIENCE) { @entered.pop } }
      shed = HTTP2TestClient.new(connect(port))
      stream = shed.request("GET", "/shed-me")
      shed.wait(stream)
      assert_includes stream.headers, [":status", "503"]
      assert_includes stream.headers, ["retry-after", "1"]
      2.times { @release << true }
      reader.join
      held.each { |done| assert_includes done.headers, [":status", "200"] }
      refute_includes @calls, "/shed-me"
      assert_equal 0, server.in_flight
    ensure
      [client, shed].each { |c| c&.close }
    end
  end

  def test_a_request_that_waited_past_max_queue_time_since_accept_is_shed
    with_server(@app, max_queue_time: 0.1) do |port, server|
      waiting = connect(port) # accepted now, its request comes while the reactor is busy
      Timeout.timeout(ProcessHelper::PATIENCE) { sleep 0.01 until server.connection_count == 1 }
      spinning = Thread.new { get(port, "/spin") }
      Timeout.timeout(ProcessHelper::PATIENCE) { @entered.pop }
      waiting.write("GET /late HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      status, headers, = read_response(waiting)
      assert_equal [503, "max_queue_time"], [status, headers["x-heron-shed"]]
      assert_equal 200, spinning.value.first
      refute_includes @calls, "/late"
    ensure
      waiting&.close
    end
  end

  def test_x_request_start_counts_only_from_a_trusted_proxy
    stamp = "t=#{((Time.now.to_f - 10) * 1000).round}" # the proxy got it 10 s ago (in ms)
    with_server(@app, max_queue_time: 1, trusted_proxies: ["127.0.0.1"]) do |port|
      assert_equal 503, get(port, "/stamped", "X-Request-Start: #{stamp}\r\n").first
      assert_equal 200, get(port, "/fresh", "X-Request-Start: t=#{Time.now.to_f}\r\n").first
      assert_equal 200, get(port, "/bogus", "X-Request-Start: t=1\r\n").first # implausible: its own measure counts
    end
    with_server(@app, max_queue_time: 1) do |port|
      assert_equal 200, get(port, "/untrusted", "X-Request-Start: #{stamp}\r\n").first
    end
    assert_equal %w[/fresh /bogus /untrusted], @calls
  end

  private

  def get(port, path, extra = "")
    socket = connect(port)
    socket.write("GET #{path} HTTP/1.1\r\nHost: x\r\n#{extra}Connection: close\r\n\r\n")
    read_response(socket)
  ensure
    socket&.close
  end
end
