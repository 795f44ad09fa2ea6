# frozen_string_literal: true

require "test_helper"
require_relative "../support/haproxy_helper"
require_relative "../support/http2_client"
require "heron/proxy_protocol"

# PROXY protocol v1/v2: the parser, raw headers over real sockets, and HAProxy's send-proxy and
# send-proxy-v2 in front of a real server (the client reaches HAProxy over ::1, HAProxy reaches
# Heron over 127.0.0.1, so only the header can tell Heron the client was ::1).
class ProxyProtocolTest < Minitest::Test
  APP = ->(env) { [200, { "content-type" => "text/plain" }, ["#{env['REMOTE_ADDR']} #{env['PATH_INFO']}"]] }
  V2 = Heron::ProxyProtocol::V2_SIGNATURE

  def test_v1_parse
    assert_equal "192.0.2.7", Heron::ProxyProtocol.parse_v1("PROXY TCP4 192.0.2.7 10.0.0.1 5555 80")
    assert_equal "2001:db8::1", Heron::ProxyProtocol.parse_v1("PROXY TCP6 2001:db8::1 ::1 5555 80")
    assert_equal "192.0.2.7", Heron::ProxyProtocol.parse_v1("PROXY TCP4 192.0.2.7 10.0.0.1 0 65535")
    assert_nil Heron::ProxyProtocol.parse_v1("PROXY UNKNOWN")
    ["GET / HTTP/1.1", "PROXY TCP4 ::1 ::1 1 2", "PROXY TCP4 1.2.3.4 5.6.7.8 1", "PROXY TCP9 1.2.3.4 5.6.7.8 1 2",
     "PROXY TCP4 999.1.1.1 5.6.7.8 1 2", "PROXY TCP4 1.2.3.4 5.6.7.8 99999 80", "PROXY TCP4 1.2.3.4 5.6.7.8 80 65536",
     "PROXY TCP4 1.2.3.4 5.6.7.8 -1 80", "PROXY TCP4 1.2.3.4 5.6.7.8 8x 80", "PROXY TCP4 1.2.3.4 5.6.7.8 00080 80"].each do |line|
      assert_raises(Heron::ProxyProtocol::Error, line) { Heron::ProxyProtocol.parse_v1(line) }
    end
  end

  def test_v2_parse
    assert_equal "192.0.2.7", Heron::ProxyProtocol.parse_v2(v2_head(0x21, 0x11, 12), [192, 0, 2, 7, 10, 0, 0, 1, 1, 2, 0, 80].pack("C*"))
    assert_equal "2001:db8::1", Heron::ProxyProtocol.parse_v2(v2_head(0x21, 0x21, 36), ipv6_block)
    assert_nil Heron::ProxyProtocol.parse_v2(v2_head(0x20, 0x00, 0), "")
    assert_raises(Heron::ProxyProtocol::Error) { Heron::ProxyProtocol.parse_v2(v2_head(0x21, 0x11, 4), "\x01\x02\x03\x04") }
    assert_raises(Heron::ProxyProtocol::Error) { Heron::ProxyProtocol.parse_v2(v2_head(0x31, 0x11, 0), "") }
  end

  def test_binds_ask_for_it
    assert_equal :v1, Heron::ProxyProtocol.version_in("tcp://0.0.0.0:80?proxy_protocol=v1")
    assert_equal :v2, Heron::ProxyProtocol.version_in("tcp://[::]:80?proxy_protocol=v2")
    assert_nil Heron::ProxyProtocol.version_in("tcp://0.0.0.0:80")
    assert_raises(Heron::ConfigError) { Heron::Configuration.new(binds: ["tcp://0.0.0.0:80?proxy_protocol=v3"]) }
  end

  def test_raw_v1_header_then_pipelined_requests_in_the_same_packet
    with_server(APP, binds: ["tcp://127.0.0.1:0?proxy_protocol=v1"]) do |port|
      socket = connect(port)
      socket.write("PROXY TCP4 192.0.2.7 127.0.0.1 5555 #{port}\r\nGET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_equal [200, "192.0.2.7 /a"], read_response(socket).values_at(0, 2)
      assert_equal [200, "192.0.2.7 /b"], read_response(socket).values_at(0, 2)
    ensure
      socket&.close
    end
  end

  def test_raw_v2_header_sent_in_pieces
    with_server(APP, binds: ["tcp://127.0.0.1:0?proxy_protocol=v2"]) do |port|
      socket = connect(port)
      header = v2_head(0x21, 0x21, 36) + ipv6_block
      socket.write(header.byteslice(0, 10))
      sleep 0.05
      socket.write(header.byteslice(10..) + "GET /v2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      assert_equal [200, "2001:db8::1 /v2"], read_response(socket).values_at(0, 2)
    ensure
      socket&.close
    end
  end

  def test_a_connection_without_a_valid_header_is_closed_and_the_app_never_runs
    calls = 0
    app = ->(env) { calls += 1; APP.call(env) }
    with_server(app, binds: ["tcp://127.0.0.1:0?proxy_protocol=v1"], header_timeout: 0.3) do |port|
      assert_equal "", raw_request(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_equal "", raw_request(port, "PROXY TCP4 1.2.3.4") # never finished: the header timeout
      assert_equal "", raw_request(port, "PROXY #{'x' * 200}\r\n")
      assert_equal 0, calls
      assert_includes raw_request(port, "PROXY UNKNOWN\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"), "127.0.0.1 /"
    end
  end

  # A connection still sending its PROXY header holds a slot of max_connections like any other.
  def test_connections_in_the_handshake_count_towards_max_connections
    with_server(APP, binds: ["tcp://127.0.0.1:0?proxy_protocol=v1"], max_connections: 1) do |port, _server|
      slow = connect(port)
      slow.write("PROXY TCP4 192.0.2.7 ")
      waiting = connect(port)
      waiting.write("PROXY TCP4 192.0.2.8 127.0.0.1 1 2\r\nGET /w HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      refute waiting.wait_readable(0.3), "the second connection was served while the first held the only slot"
      slow.write("127.0.0.1 1 2\r\nGET /s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      assert_equal "192.0.2.7 /s", read_response(slow)[2]
      assert_equal "192.0.2.8 /w", read_response(waiting)[2]
    ensure
      [slow, waiting].each { |socket| socket&.close }
    end
  end

  # HTTP/2 (prior knowledge) behind a PROXY header: the header's address, then X-Forwarded-For
  # when that address is a trusted proxy and so is the socket's peer that sent the header.
  def test_http2_behind_a_proxy_header_and_through_trusted_proxies
    with_server(APP, binds: ["tcp://127.0.0.1:0?proxy_protocol=v1"], trusted_proxies: ["127.0.0.1", "192.0.2.0/24"]) do |port|
      socket = connect(port)
      socket.write("PROXY TCP4 203.0.113.5 127.0.0.1 5555 #{port}\r\n")
      assert_equal "203.0.113.5 /h2", h2_body(HTTP2TestClient.new(socket), "/h2")
      socket.close
      socket = connect(port)
      socket.write("PROXY TCP4 192.0.2.7 127.0.0.1 5555 #{port}\r\n")
      client = HTTP2TestClient.new(socket)
      assert_equal "198.51.100.9 /xff", h2_body(client, "/xff", [["x-forwarded-for", "6.6.6.6, 198.51.100.9"]])
    ensure
      socket&.close
    end
  end

  # Anyone who reaches a PROXY listener can name any source: a header naming a trusted proxy,
  # sent by a peer that is not one, does not make the client's own X-Forwarded-For believed,
  # over HTTP/1.1 or HTTP/2.
  def test_a_proxy_header_naming_a_trusted_source_from_an_untrusted_peer_does_not_make_x_forwarded_for_believed
    with_server(APP, binds: ["tcp://127.0.0.1:0?proxy_protocol=v1"], trusted_proxies: ["192.0.2.0/24"]) do |port|
      http1 = connect(port)
      http1.write("PROXY TCP4 192.0.2.7 127.0.0.1 5555 #{port}\r\nGET /h1 HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 6.6.6.6\r\n\r\n")
      assert_equal [200, "192.0.2.7 /h1"], read_response(http1).values_at(0, 2)
      h2 = connect(port)
      h2.write("PROXY TCP4 192.0.2.7 127.0.0.1 5555 #{port}\r\n")
      assert_equal "192.0.2.7 /h2", h2_body(HTTP2TestClient.new(h2), "/h2", [["x-forwarded-for", "6.6.6.6"]])
    ensure
      http1&.close
      h2&.close
    end
  end

  def test_a_v1_port_out_of_range_closes_the_connection_and_the_app_never_runs
    with_server(APP, binds: ["tcp://127.0.0.1:0?proxy_protocol=v1"]) do |port|
      socket = connect(port)
      socket.write("PROXY TCP4 192.0.2.7 127.0.0.1 99999 #{port}\r\nGET /port HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_equal "", read_all(socket)
      assert closed_by_server?(socket)
    ensure
      socket&.close
    end
  end

  def test_haproxy_send_proxy_v1
    through_haproxy("send-proxy")
  end

  def test_haproxy_send_proxy_v2
    through_haproxy("send-proxy-v2")
  end

  private

  def through_haproxy(option)
    version = option == "send-proxy" ? "v1" : "v2"
    with_server(APP, binds: ["tcp://127.0.0.1:0?proxy_protocol=#{version}"]) do |port|
      front = free_port("::1")
      pid = start_haproxy(front, "127.0.0.1:#{port} #{option}")
      responses = 2.times.map { fetch("::1", front, "/#{version}") }
      assert_equal [[200, "::1 /#{version}"]] * 2, responses
    ensure
      stop_haproxy(pid)
    end
  end

  def h2_body(client, path, headers = [])
    stream = client.request("GET", path, headers: headers)
    client.wait(stream)
    stream.body
  end

  def fetch(host, port, path)
    socket = TCPSocket.new(host, port)
    socket.write("GET #{path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    read_response(socket).values_at(0, 2)
  ensure
    socket&.close
  end

  def v2_head(version_command, family, length)
    V2 + [version_command, family, length].pack("CCn")
  end

  def ipv6_block
    IPAddr.new("2001:db8::1").hton + IPAddr.new("::1").hton + [5555, 80].pack("nn")
  end
end
