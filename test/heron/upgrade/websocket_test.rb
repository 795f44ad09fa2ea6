# frozen_string_literal: true

require "test_helper"
require_relative "../../support/websocket_client"
require_relative "../../support/upgrade_app"

# `rack.upgrade` WebSockets (issue 32): the handler's callbacks over a real server and a raw
# RFC 6455 client whose every byte is the test's own, so each protocol case of sections 5 and 7
# (masking, reserved bits and opcodes, control frames, fragmentation, UTF-8, close codes, the
# message size limit) is checked on the wire: the close code the server sends, then its close.
class WebSocketUpgradeTest < Minitest::Test
  # Echoes every message, says hello on open, and records the callbacks it saw.
  class Echo
    attr_reader :events

    def initialize(events) = @events = events

    def on_open(client)
      @events << [:env, client.env["HTTP_UPGRADE"], client.env.key?("rack.input"), client.env.key?("rack.hijack")]
      client.write("hello #{client.env['PATH_INFO']}")
    end

    def on_message(client, data)
      @events << [:message, data.encoding.name]
      client.write(data)
    end

    def on_close(client) = @events << [:close, client.open?, client.pending]
  end

  def setup
    @events = Queue.new
  end

  def app
    events = @events
    lambda do |env|
      events << [:upgrade?, env["rack.upgrade?"]]
      return [200, { "content-type" => "text/plain" }, ["plain"]] unless env["rack.upgrade?"] == :websocket
      env["rack.upgrade"] = Echo.new(events)
      [200, {}, []]
    end
  end

  def serve(**config, &block) = with_server(app, lint: false, **config, &block)

  # Serves an app that upgrades every request to `handler`.
  def serve_handler(handler, **config, &block)
    upgrade = lambda do |env|
      env["rack.upgrade"] = handler
      [200, {}, []]
    end
    with_server(upgrade, lint: false, **config, &block)
  end

  def test_echo_text_and_binary_with_bytes_behind_the_head_then_the_close_handshake
    serve do |port|
      client = WebSocketClient.new(port, first: [WebSocketClient::TEXT, "already buffered"], path: "/room")
      assert_match(%r{\AHTTP/1.1 101 Switching Protocols\r\n}, client.head)
      assert_includes client.head, "sec-websocket-accept: #{client.expected_accept}\r\n"
      assert_match(/^upgrade: websocket\r\n/, client.head)
      refute_match(/content-length|transfer-encoding/i, client.head)
      assert_equal [WebSocketClient::TEXT, "hello /room"], client.read_frame
      assert_equal [WebSocketClient::TEXT, "already buffered"], client.read_frame
      binary = (0..255).map(&:chr).join.b * 300
      client.send_frame(WebSocketClient::BINARY, binary)
      assert_equal [WebSocketClient::BINARY, binary], client.read_frame
      client.send_frame(WebSocketClient::TEXT, "héllo")
      assert_equal [WebSocketClient::TEXT, "héllo".b], client.read_frame
      assert_equal [WebSocketClient::CLOSE, 1000, true], client.close_handshake
      events = events_through_close
      assert_equal [:upgrade?, :websocket], events.first
      assert_equal [:env, "websocket", false, false], events[1], "client.env keeps the request's fields, not its input or hijack"
      assert_equal [[:message, "UTF-8"], [:message, "ASCII-8BIT"], [:message, "UTF-8"]], events.select { |e| e[0] == :message }
      assert_equal [:close, false, -1], events.last, "on_close after the close, once"
    end
  end

  def test_a_plain_request_sees_no_upgrade_and_keeps_its_response
    serve do |port|
      status, _, body = raw_response(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      assert_equal [200, "plain"], [status, body]
      assert_equal [:upgrade?, nil], @events.pop(true)
    end
  end

  # A handler set on a request that was offered no upgrade (no `rack.upgrade?`) is ignored: the
  # response is sent as it is and the connection stays HTTP, its next request served.
  def test_a_handler_set_on_a_request_offered_no_upgrade_is_ignored
    serve_handler(Echo.new(@events)) do |port|
      socket = TCPSocket.new("127.0.0.1", port)
      2.times do
        socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert_match(%r{\AHTTP/1.1 200 }, socket.readpartial(4096))
      end
      assert @events.empty?, "no callback ran"
    ensure
      socket&.close
    end
  end

  # A middleware that withdraws the offer (deletes `rack.upgrade?`) is heard: a handler the app
  # then sets anyway is ignored, and the handshake gets the app's plain response.
  def test_a_handler_set_after_a_middleware_withdrew_the_offer_is_ignored
    handler = Echo.new(@events)
    app = lambda do |env|
      env.delete("rack.upgrade?")
      env["rack.upgrade"] = handler
      [200, { "content-type" => "text/plain" }, ["plain"]]
    end
    with_server(app, lint: false) do |port|
      key = ["0123456789abcdef"].pack("m0")
      status, _, body = raw_response(port, "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade, close\r\n" \
                                           "Sec-WebSocket-Key: #{key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
      assert_equal [200, "plain"], [status, body]
      assert @events.empty?, "no callback ran"
    end
  end

  def test_the_connection_waits_parked_between_messages
    skip "no epoll here" unless Heron::Connection::IdleSet.supported?
    serve do |port, server|
      client = WebSocketClient.new(port)
      client.read_frame
      eventually { server.parked_count == 1 }
      client.send_frame(WebSocketClient::TEXT, "wake")
      assert_equal [WebSocketClient::TEXT, "wake"], client.read_frame
      eventually { server.parked_count == 1 }
      assert_equal [WebSocketClient::CLOSE, 1000, true], client.close_handshake
      eventually { server.connection_count.zero? }
    end
  end

  def test_a_fragmented_message_with_a_ping_between_its_fragments
    serve do |port|
      client = WebSocketClient.new(port)
      client.read_frame
      client.socket.write(frame(0x01, "frag", fin: false) + frame(0x09, "are you there") +
                          frame(0x00, "men", fin: false) + frame(0x00, "ted"))
      assert_equal [0x0A, "are you there"], client.read_frame, "the pong comes first"
      assert_equal [WebSocketClient::TEXT, "fragmented"], client.read_frame
    end
  end

  def test_frames_that_arrive_a_few_bytes_at_a_time
    serve do |port, server|
      client = WebSocketClient.new(port)
      client.read_frame
      client.socket.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, 1)
      bytes = WebSocketClient.frame(WebSocketClient::TEXT, "piece" * 30) + frame(0x02, "x" * 300, fin: false) + frame(0x00, "y")
      bytes.bytes.each_slice(3) do |slice|
        client.socket.write(slice.pack("C*"))
        sleep 0.001
      end
      assert_equal [WebSocketClient::TEXT, "piece" * 30], client.read_frame
      assert_equal [WebSocketClient::BINARY, "#{'x' * 300}y"], client.read_frame
      eventually { server.parked_count == 1 } if Heron::Connection::IdleSet.supported?
    end
  end

  def test_a_callback_that_waits_holds_up_neither_other_connections_nor_its_order
    gate = Thread::Queue.new
    handler = Module.new do
      define_singleton_method(:on_message) do |client, data|
        case data
        when "wait" then client.write("released by #{gate.pop}") # waits in this callback's fiber
        when "release" then gate << "the other connection"
        else client.write(data)
        end
      end
    end
    serve_handler(handler) do |port|
      waiting = WebSocketClient.new(port)
      other = WebSocketClient.new(port)
      waiting.send_frame(WebSocketClient::TEXT, "wait")
      waiting.send_frame(WebSocketClient::TEXT, "after")
      other.send_frame(WebSocketClient::TEXT, "release")
      other.send_frame(WebSocketClient::TEXT, "served meanwhile")
      assert_equal [WebSocketClient::TEXT, "served meanwhile"], other.read_frame
      assert_equal [WebSocketClient::TEXT, "released by the other connection"], waiting.read_frame
      assert_equal [WebSocketClient::TEXT, "after"], waiting.read_frame, "the next message waited its turn"
    end
  end

  def test_a_callback_that_raises_is_logged_and_closes_its_connection_with_1011_only
    closed = Queue.new
    handler = Module.new do
      define_singleton_method(:on_message) { |client, data| data == "boom" ? raise("handler bug") : client.write(data) }
      define_singleton_method(:on_close) { |_client| closed << :on_close }
    end
    serve_handler(handler) do |port|
      failing = WebSocketClient.new(port)
      other = WebSocketClient.new(port)
      failing.send_frame(WebSocketClient::TEXT, "boom")
      opcode, payload = failing.read_frame
      assert_equal [WebSocketClient::CLOSE, 1011], [opcode, payload.unpack1("n")]
      failing.send_frame(WebSocketClient::CLOSE, [1011].pack("n"))
      assert_equal :on_close, Timeout.timeout(ProcessHelper::PATIENCE) { closed.pop }, "on_close still runs"
      assert_match(/rack.upgrade handler's on_message raised.*handler bug/m, server_log)
      other.send_frame(WebSocketClient::TEXT, "still here")
      assert_equal [WebSocketClient::TEXT, "still here"], other.read_frame
    end
  end

  def test_every_valid_close_code_is_echoed
    serve do |port|
      [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999].each do |code|
        client = WebSocketClient.new(port)
        client.read_frame
        client.send_frame(WebSocketClient::CLOSE, [code].pack("n") + "bye")
        assert_equal [WebSocketClient::CLOSE, code, true], closing(client), "close code #{code}"
      end
    end
  end

  def test_a_close_without_a_code_is_answered_1000
    serve do |port|
      client = WebSocketClient.new(port)
      client.read_frame
      client.send_frame(WebSocketClient::CLOSE, "")
      assert_equal [WebSocketClient::CLOSE, 1000, true], closing(client)
    end
  end

  def test_invalid_close_codes_and_payloads_fail_the_connection
    serve do |port|
      [0, 999, 1004, 1005, 1006, 1015, 1016, 2000, 2999, 5000, 65_535].each do |code|
        assert_equal 1002, failure(port, frame(0x08, [code].pack("n"))), "close code #{code} is refused"
      end
      assert_equal 1002, failure(port, frame(0x08, "x")), "a one-byte close payload"
      assert_equal 1007, failure(port, frame(0x08, [1000].pack("n") + "\xff\xfe".b)), "a reason that is not UTF-8"
    end
  end

  def test_malformed_frames_fail_the_connection_with_their_code
    serve(websocket_max_message_size: 1000) do |port|
      cases = {
        "an unmasked client frame" => [1002, [0x81, 2].pack("CC") + "hi"],
        "RSV1 set" => [1002, frame(0x01, "x", rsv: 0x40)],
        "RSV2 set" => [1002, frame(0x01, "x", rsv: 0x20)],
        "RSV3 set" => [1002, frame(0x01, "x", rsv: 0x10)],
        "reserved data opcode 3" => [1002, frame(0x03, "x")],
        "reserved control opcode 0xB" => [1002, frame(0x0B, "x")],
        "a fragmented ping" => [1002, frame(0x09, "x", fin: false)],
        "a ping of 126 bytes" => [1002, frame(0x09, "x" * 126)],
        "a continuation with no message" => [1002, frame(0x00, "x")],
        "a new message inside a fragmented one" => [1002, frame(0x01, "a", fin: false) + frame(0x01, "b")],
        "text that is not UTF-8" => [1007, frame(0x01, "\xc3\x28".b)],
        "UTF-8 broken across fragments" => [1007, frame(0x01, "\xe2\x82".b, fin: false) + frame(0x00, "x")],
        "a message over websocket_max_message_size" => [1009, frame(0x02, "x" * 1001)],
        "fragments adding up past it" => [1009, frame(0x02, "x" * 600, fin: false) + frame(0x00, "x" * 600)]
      }
      cases.each { |name, (code, bytes)| assert_equal code, failure(port, bytes), name }
    end
  end

  def test_an_oversized_message_is_refused_from_its_header
    serve(websocket_max_message_size: 1000) do |port|
      client = WebSocketClient.new(port)
      client.read_frame
      client.socket.write([0x82, 0x80 | 127, 50 * 1024 * 1024].pack("CCQ>") + "mask")
      assert_equal [WebSocketClient::CLOSE, 1009], client.read_frame.then { |op, payload| [op, payload.unpack1("n")] },
                   "closed before any of its 50 MiB is sent"
    end
  end

  def test_iodines_status_0_upgrades_and_a_status_of_300_or_more_is_sent_as_it_is
    app = lambda do |env|
      env["rack.upgrade"] = Echo.new(@events)
      env["PATH_INFO"] == "/denied" ? [403, { "content-type" => "text/plain" }, ["no"]] : [0, {}, []]
    end
    with_server(app, lint: false) do |port|
      client = WebSocketClient.new(port)
      assert_match(%r{\AHTTP/1.1 101 }, client.head)
      denied = WebSocketClient.new(port, path: "/denied")
      assert_match(%r{\AHTTP/1.1 403 }, denied.head, "the handler is ignored, the response sent")
      assert_equal "no", denied.socket.read(2)
    end
  end

  def test_writes_and_close_from_another_thread_are_handed_to_the_reactor
    opened = Queue.new
    handler = Module.new do
      define_singleton_method(:on_open) { |client| opened << client }
      define_singleton_method(:on_message) { |client, data| client.write(data) }
    end
    serve_handler(handler) do |port|
      client = WebSocketClient.new(port)
      session_client = Timeout.timeout(ProcessHelper::PATIENCE) { opened.pop }
      assert Thread.new { session_client.write("from a background thread") }.value
      assert_equal [WebSocketClient::TEXT, "from a background thread"], client.read_frame
      client.send_frame(WebSocketClient::TEXT, "still fine")
      assert_equal [WebSocketClient::TEXT, "still fine"], client.read_frame
      Thread.new { session_client.close }.join
      opcode, payload = client.read_frame
      assert_equal [WebSocketClient::CLOSE, 1000], [opcode, payload.unpack1("n")]
    end
  end

  # A close from outside the connection's own callbacks (a background thread, another
  # connection's on_message) while it waits parked: the close frame goes out at once and the
  # server waits a bounded time (5 s) for the client's close, not until the ping deadline.
  def test_a_close_from_outside_its_callbacks_ends_a_parked_websocket_promptly
    opened = Queue.new
    by_path = {}
    handler = Module.new do
      define_singleton_method(:on_open) { |client| opened << (by_path[client.env["PATH_INFO"]] = client) }
      define_singleton_method(:on_message) { |_client, path| by_path.fetch(path).close }
    end
    with_server(UpgradeApp.with(handler), lint: false, websocket_ping_interval: 600) do |port, server|
      by_thread, by_peer, peer = %w[/thread /peer /closer].map do |path|
        WebSocketClient.new(port, path: path).tap { Timeout.timeout(ProcessHelper::PATIENCE) { opened.pop } }
      end
      eventually { server.parked_count == 3 } if Heron::Connection::IdleSet.supported?
      Thread.new { by_path.fetch("/thread").close }.join
      peer.send_frame(WebSocketClient::TEXT, "/peer")
      [by_thread, by_peer].each do |client|
        opcode, payload = client.read_frame
        assert_equal [WebSocketClient::CLOSE, 1000], [opcode, payload.unpack1("n")]
      end
      by_peer.send_frame(WebSocketClient::CLOSE, [1000].pack("n"))
      assert_nil Timeout.timeout(ProcessHelper::PATIENCE) { by_peer.socket.read(1) }, "the close handshake completes"
      assert_nil Timeout.timeout(60) { by_thread.socket.read(1) }, "a client that never answers is closed, long before the ping"
    end
  end

  def test_a_broadcast_reaches_connections_of_every_reactor_thread
    members = Queue.new
    room = []
    handler = Module.new do
      define_singleton_method(:on_open) { |client| (room << client) && members << Thread.current }
      define_singleton_method(:on_message) { |_client, data| room.each { |member| member.write(data) } }
    end
    serve_handler(handler, threads: 2) do |port|
      clients = []
      threads = []
      until threads.uniq.size == 2 || clients.size == 200 # until both reactor threads hold some
        clients << WebSocketClient.new(port)
        threads << Timeout.timeout(ProcessHelper::PATIENCE) { members.pop }
      end
      assert_equal 2, threads.uniq.size, "both reactor threads accepted WebSockets"
      clients.last.send_frame(WebSocketClient::TEXT, "to everyone")
      clients.each { |client| assert_equal [WebSocketClient::TEXT, "to everyone"], client.read_frame }
    end
  end

  def test_an_idle_websocket_is_pinged_and_closed_when_it_stays_silent
    serve(websocket_ping_interval: 0.3) do |port, server|
      answering = WebSocketClient.new(port)
      silent = WebSocketClient.new(port)
      [answering, silent].each(&:read_frame) # hello
      opcode, = answering.read_frame
      assert_equal 0x9, opcode, "a ping after websocket_ping_interval"
      answering.send_frame(0xA, "")
      assert_equal 0x9, silent.read_frame.first
      assert_nil Timeout.timeout(ProcessHelper::PATIENCE) { silent.socket.read(1) }, "silent for another interval: closed"
      assert_equal 0x9, answering.read_frame.first, "the one that answered is pinged again, still open"
      answering.send_frame(WebSocketClient::TEXT, "alive")
      frame = answering.read_frame while frame.nil? || frame.first == 0x9 # more pings on a slow machine
      assert_equal [WebSocketClient::TEXT, "alive"], frame
      eventually { server.connection_count == 1 }
    end
  end

  def test_a_client_that_goes_away_without_a_close_gets_on_close
    serve do |port, server|
      client = WebSocketClient.new(port)
      client.read_frame
      client.socket.close
      eventually { server.connection_count.zero? }
      assert_equal [:close, false, -1], events_through_close.last
    end
  end

  private

  # A masked client frame with any header bits the test chooses.
  def frame(opcode, payload, fin: true, rsv: 0)
    bytes = WebSocketClient.frame(opcode, payload)
    bytes.setbyte(0, (fin ? 0x80 : 0) | rsv | opcode)
    bytes
  end

  # Sends `bytes` on a fresh WebSocket; returns the close code the server answers with, after
  # checking that the server then closes the connection.
  def failure(port, bytes)
    client = WebSocketClient.new(port)
    client.read_frame
    client.socket.write(bytes)
    opcode, code, eof = closing(client)
    assert_equal WebSocketClient::CLOSE, opcode
    assert eof, "the server closes after its close frame"
    code
  end

  # @return [Array(Integer, Integer, Boolean)] the server's close frame: opcode, code, and
  #   whether the server then closed the connection.
  def closing(client)
    opcode, payload = client.read_frame
    eof = Timeout.timeout(ProcessHelper::PATIENCE) { client.socket.read(1).nil? }
    [opcode, payload.unpack1("n"), eof]
  ensure
    client.socket.close
  end

  # The events recorded until on_close's, waiting for it: the server runs on_close just after it
  # closes the socket, so a client that saw the close may get here first.
  def events_through_close
    events = []
    Timeout.timeout(ProcessHelper::PATIENCE) { events << @events.pop until events.last&.first == :close }
    events
  end

  def raw_response(port, request)
    socket = connect(port)
    socket.write(request)
    read_response(socket).values_at(0, 1, 2)
  ensure
    socket&.close
  end
end
