# frozen_string_literal: true

require "test_helper"
require_relative "../../support/websocket_client"

# `rack.upgrade` connections over time: a graceful stop (on_shutdown, close 1001, within
# shutdown_timeout), backpressure (pending and on_drained for a client that reads late; a client
# that never reads is closed at websocket_max_pending instead of growing memory), and SSE.
class UpgradeLifecycleTest < Minitest::Test
  CHUNK = ("x" * 64 * 1024).b

  # Records its callbacks; "fill" writes until the socket pushes back, "flood" writes 200 chunks.
  class Recorder
    def initialize(events) = @events = events

    def on_open(client)
      @events << [:open, client.env["rack.upgrade?"]]
      client.write("one\ntwo") if client.env["rack.upgrade?"] == :sse
    end

    def on_shutdown(client) = client.write("going away") && @events << [:shutdown]
    def on_close(_client) = @events << [:close]

    def on_drained(client)
      @events << [:drained, client.pending]
      client.write("drained")
    end

    def on_message(client, data)
      case data
      when "fill" then fill(client)
      when "flood" then @events << [:flooded, 200.times.count { client.write(CHUNK) }]
      end
    end

    def fill(client)
      writes = 0
      writes += 1 while client.pending.zero? && writes < 10_000 && client.write(CHUNK)
      @events << [:filled, writes, client.pending]
    end
  end

  # Any upgradable request is upgraded (its body never sent); the handler reports to @events.
  def setup
    events = @events = Queue.new
    @app = lambda do |env|
      env["rack.upgrade"] = Recorder.new(events) if env["rack.upgrade?"]
      [200, { "x-room" => "lobby" }, ["never sent"]]
    end
  end

  # @return [Array] the handler's next event, waited for (a failure, not a hang, when none comes).
  def next_event = Timeout.timeout(ProcessHelper::PATIENCE) { @events.pop }

  def test_a_graceful_stop_says_going_away_and_closes_each_websocket_with_1001
    server = start_server(@app, lint: false, shutdown_timeout: 10)
    port = server.bound_ports.first
    clients = Array.new(3) { WebSocketClient.new(port) }
    3.times { assert_equal [:open, :websocket], next_event }
    server.stop(graceful: true)
    clients.each do |client|
      assert_equal [WebSocketClient::TEXT, "going away"], client.read_frame, "on_shutdown's write comes first"
      opcode, payload = client.read_frame
      assert_equal [WebSocketClient::CLOSE, 1001], [opcode, payload.unpack1("n")]
      client.send_frame(WebSocketClient::CLOSE, [1001].pack("n"))
      assert_nil Timeout.timeout(ProcessHelper::PATIENCE) { client.socket.read(1) }, "the server closes"
    end
    assert @server_thread.join(ProcessHelper::PATIENCE), "the server stops once every WebSocket closed"
    events = Array.new(@events.size) { @events.pop(true) }
    assert_equal [[:shutdown]] * 3 + [[:close]] * 3, events.sort_by { |event| event == [:close] ? 1 : 0 }
  ensure
    clients&.each { |client| client.socket.close }
    stop_server(server) if @server_thread&.alive?
  end

  def test_a_client_that_ignores_the_close_is_cut_at_shutdown_timeout
    server = start_server(@app, lint: false, shutdown_timeout: 1)
    client = WebSocketClient.new(server.bound_ports.first)
    next_event
    server.stop(graceful: true)
    client.read_frame # going away
    assert_equal WebSocketClient::CLOSE, client.read_frame.first
    assert @server_thread.join(ProcessHelper::PATIENCE), "the server stops by shutdown_timeout though the client never answered"
    assert_nil Timeout.timeout(ProcessHelper::PATIENCE) { client.socket.read(1) }
  ensure
    client&.socket&.close
  end

  def test_writes_the_socket_does_not_take_are_pending_then_drained
    with_server(@app, lint: false) do |port|
      client = WebSocketClient.new(port)
      next_event
      client.send_frame(WebSocketClient::TEXT, "fill")
      kind, writes, pending = next_event
      assert_equal :filled, kind
      assert_operator pending, :>, 0, "the client did not read: #{writes} writes, the last ones wait"
      writes.times { assert_equal [WebSocketClient::BINARY, CHUNK], client.read_frame }
      assert_equal [:drained, 0], next_event
      assert_equal [WebSocketClient::TEXT, "drained"], client.read_frame, "on_drained runs once all is sent"
    end
  end

  def test_a_client_that_never_reads_is_closed_at_websocket_max_pending
    with_server(@app, lint: false, websocket_max_pending: 256 * 1024) do |port, server|
      client = WebSocketClient.new(port)
      client.socket.setsockopt(Socket::SOL_SOCKET, Socket::SO_RCVBUF, 16 * 1024)
      next_event
      client.send_frame(WebSocketClient::TEXT, "flood")
      kind, accepted = next_event
      assert_equal :flooded, kind
      assert_operator accepted, :<, 200, "writes past websocket_max_pending are refused (200 x 64 KiB offered)"
      assert_equal [:close], next_event
      eventually { server.connection_count.zero? }
      assert_match(/does not read/, server_log)
    ensure
      client&.socket&.close
    end
  end

  def test_sse_events_then_the_client_goes_away
    with_server(@app, lint: false) do |port, server|
      socket = connect(port)
      socket.write("GET /events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
      status, headers, = read_response(socket, head: true)
      assert_equal 200, status
      assert_equal ["text/event-stream", "no-cache", "close", "lobby"], headers.values_at("content-type", "cache-control", "connection", "x-room")
      assert_equal [:open, :sse], next_event
      assert_equal "data: one\ndata: two\n\n", Timeout.timeout(ProcessHelper::PATIENCE) { socket.read(21) }
      eventually { server.parked_count == 1 } if Heron::Connection::IdleSet.supported?
      socket.close
      assert_equal [:close], next_event
    end
  end
end
