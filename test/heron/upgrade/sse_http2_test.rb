# frozen_string_literal: true

require "test_helper"
require "open3"
require_relative "../../support/http2_client"
require_relative "../../support/upgrade_app"

# `rack.upgrade` SSE over HTTP/2 (curl, cleartext HTTP/2 with prior knowledge): the same
# handler API as over HTTP/1.1, on one stream: events as DATA frames, the stream ended by
# client.close, on_close when the app or the client ends it.
class SSEOverHTTP2Test < Minitest::Test
  # Sends two events, then closes unless told to keep the stream open.
  class Events
    def initialize(events, keep_open) = (@events = events) && (@keep_open = keep_open)
    def on_close(client) = @events << [:close, client.open?, client.pending]
    def on_shutdown(client) = client.write("going away") && @events << [:shutdown]

    def on_open(client)
      @events << [:open, client.env["rack.upgrade?"], client.env["SERVER_PROTOCOL"]]
      client.write("first")
      client.write("second\nline")
      client.close unless @keep_open
    end
  end

  def setup
    skip "curl is not installed" unless system("command -v curl >/dev/null")
    events = @events = Queue.new
    @app = lambda do |env|
      env["rack.upgrade"] = Events.new(events, env["PATH_INFO"] == "/open") if env["rack.upgrade?"]
      [200, { "x-feed" => "news" }, ["not sent"]]
    end
  end

  def test_events_over_an_http2_stream_ended_by_the_app
    with_server(@app, lint: false) do |port|
      out, err, status = Open3.capture3("curl", "-sS", "-i", "--http2-prior-knowledge", "--max-time", "30",
                                        "-H", "Accept: text/event-stream", "http://127.0.0.1:#{port}/feed")
      assert status.success?, err
      head, body = out.split("\r\n\r\n", 2)
      assert_match(%r{\AHTTP/2 200}, head)
      assert_match(%r{^content-type: text/event-stream}, head)
      assert_match(/^x-feed: news/, head)
      assert_equal "data: first\n\ndata: second\ndata: line\n\n", body
      assert_equal [[:open, :sse, "HTTP/2"], [:close, false, -1]], Array.new(2) { next_event }
    end
  end

  def test_a_client_that_goes_away_ends_the_stream_with_on_close
    with_server(@app, lint: false) do |port|
      out, = Open3.capture3("curl", "-sS", "--http2-prior-knowledge", "--max-time", "2",
                            "-H", "Accept: text/event-stream", "http://127.0.0.1:#{port}/open")
      assert_equal "data: first\n\ndata: second\ndata: line\n\n", out, "the events came before curl gave up"
      assert_equal [[:open, :sse, "HTTP/2"], [:close, false, -1]], Array.new(2) { next_event }
    end
  end

  def test_an_on_open_that_raises_is_logged_and_ends_its_stream
    events = @events
    handler = Module.new do
      define_singleton_method(:on_open) { |client| client.write("before") && raise("handler bug") }
      define_singleton_method(:on_close) { |_client| events << [:close] }
    end
    with_server(UpgradeApp.with(handler), lint: false) do |port|
      out, err, status = Open3.capture3("curl", "-sS", "--http2-prior-knowledge", "--max-time", "30",
                                        "-H", "Accept: text/event-stream", "http://127.0.0.1:#{port}/feed")
      assert status.success?, err
      assert_equal "data: before\n\n", out, "the stream ends, not left open until curl gives up"
      assert_equal [:close], next_event
      assert_match(/rack.upgrade handler's on_open raised.*handler bug/m, server_log)
    end
  end

  def test_a_graceful_stop_ends_the_stream_after_on_shutdown
    server = start_server(@app, lint: false, shutdown_timeout: 10)
    port = server.bound_ports.first
    out = IO.popen(["curl", "-sS", "--http2-prior-knowledge", "--max-time", "30", "-H", "Accept: text/event-stream",
                    "http://127.0.0.1:#{port}/open"])
    assert_equal :open, next_event.first
    server.stop(graceful: true)
    body = Timeout.timeout(ProcessHelper::PATIENCE) { out.read }
    assert_equal "data: first\n\ndata: second\ndata: line\n\ndata: going away\n\n", body
    assert_equal [[:shutdown], [:close, false, -1]], Array.new(2) { next_event }
    assert @server_thread.join(ProcessHelper::PATIENCE), "the server stops without waiting for shutdown_timeout"
  ensure
    out&.close
    stop_server(server) if @server_thread&.alive?
  end

  # A background thread (as a broadcast from one would) writes to the stream and closes it: the
  # writes are handed to the reactor thread, sent in order by the stream's fiber, then the end.
  def test_writes_and_close_from_another_thread
    opened = Queue.new
    with_server(UpgradeApp.with(UpgradeApp.handing_to(opened)), lint: false) do |port|
      out = IO.popen(["curl", "-sS", "--http2-prior-knowledge", "--max-time", "60", "-H", "Accept: text/event-stream",
                      "http://127.0.0.1:#{port}/feed"])
      client = Timeout.timeout(ProcessHelper::PATIENCE) { opened.pop }
      written = Thread.new { Array.new(3) { |i| client.write("from a thread #{i}") }.tap { client.close } }.value
      assert_equal [true] * 3, written
      assert_equal "data: from a thread 0\n\ndata: from a thread 1\n\ndata: from a thread 2\n\n",
                   Timeout.timeout(ProcessHelper::PATIENCE) { out.read }, "curl had every event, then the stream's end"
    ensure
      out&.close
    end
  end

  # A client whose window stays shut (it reads nothing): what other threads write waits in the
  # stream's queue up to websocket_max_pending, then the stream is closed, not grown.
  def test_writes_from_another_thread_to_a_client_that_does_not_read_are_bounded
    opened = Queue.new
    with_server(UpgradeApp.with(UpgradeApp.handing_to(opened)), lint: false, websocket_max_pending: 64 * 1024) do |port|
      h2 = HTTP2TestClient.new(connect(port), settings: [[Protocol::HTTP2::Settings::INITIAL_WINDOW_SIZE, 0]])
      stream = h2.request("GET", "/feed", headers: [%w[accept text/event-stream]])
      client = Timeout.timeout(ProcessHelper::PATIENCE) { opened.pop }
      written = Thread.new { Array.new(16) { client.write("x" * 8192) } }.value
      assert_equal [true] * 16, written, "each write was handed over while the stream was open"
      assert_equal [:close, -1], Timeout.timeout(ProcessHelper::PATIENCE) { opened.pop }
      h2.wait(stream, timeout: ProcessHelper::PATIENCE)
      assert_equal "", stream.body, "nothing was sent: the window never opened"
      assert_match(/does not read .*websocket_max_pending 65536/, server_log)
    ensure
      h2&.close
    end
  end

  private

  def next_event = Timeout.timeout(ProcessHelper::PATIENCE) { @events.pop }
end
