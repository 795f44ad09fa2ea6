# frozen_string_literal: true

require "test_helper"
require_relative "../../support/websocket_client"
require "async/websocket/adapters/rack"
require "async/websocket/client"
require "async/http/endpoint"
require "tmpdir"
require_relative "../../support/nginx_helper"

# WebSockets over Heron with real peers: a 101 with a streaming body (async-websocket, through
# protocol-rack) gets a bare head and the raw socket (Response::RawInput), and a full hijack
# (faye-websocket) finds env["rack.hijack_io"].
class RawInputTest < Minitest::Test
  include NginxHelper

  # @param open [#call, nil] called with +1 when a socket opens and -1 when its echo loop ends.
  def echo_app(open = nil)
    lambda do |env|
      response = Async::WebSocket::Adapters::Rack.open(env) do |connection|
        open&.call(1)
        while (message = connection.read)
          connection.write(message)
          connection.flush
        end
      ensure
        open&.call(-1)
      end
      response || [426, { "content-type" => "text/plain" }, ["websocket only\n"]]
    end
  end

  def test_async_websocket_echo_text_and_binary_and_close_with_a_raw_client
    with_server(echo_app) do |port|
      client = WebSocketClient.new(port, first: [WebSocketClient::TEXT, "already buffered"])
      assert_match(/\AHTTP\/1.1 101 Switching Protocols\r\n/, client.head)
      assert_match(/^connection: upgrade\r\n/i, client.head)
      assert_match(/^upgrade: websocket\r\n/i, client.head)
      assert_includes client.head, "sec-websocket-accept: #{client.expected_accept}\r\n"
      refute_match(/transfer-encoding|content-length/i, client.head)
      assert_equal [WebSocketClient::TEXT, "already buffered"], client.read_frame, "bytes behind the head come first"
      binary = (0..255).map(&:chr).join.b * 300
      client.send_frame(WebSocketClient::BINARY, binary)
      opcode, echoed = client.read_frame
      assert_equal WebSocketClient::BINARY, opcode
      assert echoed == binary, "binary frame of #{binary.bytesize} bytes echoed intact (got #{echoed.bytesize})"
      client.send_frame(WebSocketClient::TEXT, "héllo")
      assert_equal [WebSocketClient::TEXT, "héllo".b], client.read_frame
      assert_equal [WebSocketClient::CLOSE, 1000, true], client.close_handshake
    end
  end

  def test_async_websocket_client_and_100_concurrent_sockets_on_one_reactor
    open = 0
    peak = 0
    app = echo_app(->(change) { peak = [peak, open += change].max })
    with_server(app, threads: 1) do |port|
      endpoint = Async::HTTP::Endpoint.parse("http://127.0.0.1:#{port}/")
      echoed = Sync { echo_many(endpoint, 100) }
      assert_equal 100.times.map { |i| "message #{i}" }, echoed.sort_by { |m| m[/\d+/].to_i }
      assert_equal 100, peak, "all 100 sockets were open on the server at once"
      Timeout.timeout(ProcessHelper::PATIENCE) { sleep 0.05 until open.zero? }
    end
  end

  def test_faye_websocket_full_hijack_finds_rack_hijack_io
    require "faye/websocket"
    Thread.new { EM.run } unless EM.reactor_running?
    Timeout.timeout(ProcessHelper::PATIENCE) { sleep 0.01 until EM.reactor_running? }
    hijack_io = Queue.new
    app = lambda do |env|
      ws = Faye::WebSocket.new(env)
      hijack_io << env["rack.hijack_io"]
      ws.on(:message) { |event| ws.send(event.data) }
      ws.rack_response
    end
    with_server(app, lint: false) do |port| # rack_response is the Rack 2 [-1, {}, []]
      client = WebSocketClient.new(port)
      assert_match(/\AHTTP\/1.1 101 /, client.head)
      assert_kind_of BasicSocket, Timeout.timeout(ProcessHelper::PATIENCE) { hijack_io.pop }
      client.send_frame(WebSocketClient::TEXT, "faye text")
      assert_equal [WebSocketClient::TEXT, "faye text"], client.read_frame
      client.send_frame(WebSocketClient::BINARY, "\x00\xFFbin".b)
      assert_equal [WebSocketClient::BINARY, "\x00\xFFbin".b], client.read_frame
      assert_equal [WebSocketClient::CLOSE, 1000, true], client.close_handshake
    end
  end

  # nginx proxies an upgrade only when the 101 is a bare head: the frames then pass through it.
  def test_websocket_through_nginx
    proxy = "location / { proxy_pass http://127.0.0.1:%d; proxy_http_version 1.1; " \
            "proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection upgrade; }"
    Dir.mktmpdir("heron-nginx") do |dir|
      File.chmod(0o755, dir)
      with_server(echo_app) do |heron_port|
        with_nginx(dir, format(proxy, heron_port)) do |port|
          client = WebSocketClient.new(port)
          assert_match(/\AHTTP\/1.1 101 /, client.head, File.read(File.join(dir, "error.log")))
          client.send_frame(WebSocketClient::TEXT, "via nginx")
          assert_equal [WebSocketClient::TEXT, "via nginx"], client.read_frame
          assert_equal [WebSocketClient::CLOSE, 1000, true], client.close_handshake
        end
      end
    end
  end

  def test_reads_take_buffered_bytes_first_then_the_socket_and_see_the_end
    server, client = UNIXSocket.pair
    socket = Heron::Connection::BufferedSocket.new(server)
    client.write("ahead")
    socket.fill(1) # bytes already buffered behind a request head
    input = Heron::Response::RawInput.new(socket, limit: 64)
    client.write("-then-")
    assert_equal "ahead-", input.read(6)
    assert_equal "then-", input.readpartial(100)
    client.write("rest")
    client.close
    assert_equal "rest", input.read
    assert_nil input.read(1)
    assert_raises(EOFError) { input.readpartial(1) }
  ensure
    server&.close
  end

  def test_one_read_cannot_gather_more_than_the_limit
    server, client = UNIXSocket.pair
    input = Heron::Response::RawInput.new(Heron::Connection::BufferedSocket.new(server), limit: 10)
    assert_raises(Heron::Request::Input::TooLarge) { input.read(11) }
    client.write("x" * 11)
    client.close
    assert_raises(Heron::Request::Input::TooLarge) { input.read }
    assert_equal "x" * 10, input.read(10)
  ensure
    server&.close
  end

  private

  # Opens `count` WebSockets at once; each echoes a message, then all stay open until every one
  # has been answered, so the server holds them all at the same time.
  def echo_many(endpoint, count)
    all_echoed = Async::Condition.new
    echoed = []
    tasks = count.times.map do |i|
      Async do
        Async::WebSocket::Client.connect(endpoint) do |connection|
          connection.write(Protocol::WebSocket::TextMessage.new("message #{i}"))
          connection.flush
          echoed << connection.read.to_str
          echoed.size == count ? all_echoed.signal : all_echoed.wait
        end
      end
    end
    tasks.each(&:wait)
    echoed
  end
end
