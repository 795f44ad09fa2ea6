# frozen_string_literal: true

require "test_helper"
require "open3"

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

  private

  def next_event = Timeout.timeout(ProcessHelper::PATIENCE) { @events.pop }
end
