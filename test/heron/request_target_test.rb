# frozen_string_literal: true

require "test_helper"
require_relative "../support/http2_client"

# Raw bytes >= 0x80 in the request target, over real sockets: well-formed UTF-8 reaches the app
# as sent; anything else (the overlong "/" C0 AF, surrogates, truncated sequences, F5-FF) is a
# 400 the app never sees, over HTTP/1.1 (the C parser) and HTTP/2 (:path) alike.
class HeronRequestTargetTest < Minitest::Test
  APP = ->(env) { [200, { "content-type" => "text/plain" }, [env["PATH_INFO"].b.unpack1("H*")]] }
  VALID = "/caf\xC3\xA9/\xF0\x9F\x90\xA6".b
  INVALID = ["/..\xC0\xAF..".b, "/\xED\xA0\x80".b, "/a\xE2\x9C".b, "/\xF5\x80\x80\x80".b, "/\xFF".b].freeze

  def test_http1_accepts_utf8_and_refuses_the_rest_with_400
    with_server(APP) do |port, _server|
      assert_equal [200, VALID.unpack1("H*")], http1(port, VALID)
      INVALID.each { |target| assert_equal [400, "Bad Request: invalid UTF-8 in request target\n"], http1(port, target), target.inspect }
    end
  end

  def test_http2_accepts_utf8_and_refuses_the_rest_with_400
    with_server(APP) do |port, _server|
      h2 = HTTP2TestClient.new(TCPSocket.new("127.0.0.1", port))
      valid = h2.request("GET", VALID)
      invalid = INVALID.map { |path| h2.request("GET", path) }
      h2.wait(valid, *invalid, timeout: 30)
      assert_equal ["200", VALID.unpack1("H*")], [valid.headers.assoc(":status")&.last, valid.body], server_log
      assert_equal [["400", "Bad Request\n"]] * INVALID.size, invalid.map { |stream| [stream.headers.assoc(":status")&.last, stream.body] }
      assert_equal INVALID.size, server_log.scan("400 invalid UTF-8 in request target").size, server_log
    ensure
      h2&.close
    end
  end

  private

  def http1(port, target)
    socket = connect(port)
    socket.write("GET #{target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".b)
    read_response(socket).values_at(0, 2)
  ensure
    socket&.close
  end
end
