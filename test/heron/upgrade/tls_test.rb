# frozen_string_literal: true

require "test_helper"
require "base64"
require_relative "../../support/tls_certificates"
require_relative "../../support/websocket_client"

# `rack.upgrade` WebSockets over TLS (wss://): a TLS socket cannot wait in the parking lot (its
# readiness is not the kernel's), so the connection waits in its fiber between messages; the
# protocol is the same.
class WebSocketTLSTest < Minitest::Test
  include TLSCertificates::Fixture

  NAMES = ["127.0.0.1"].freeze

  # Echoes.
  module Echo
    def self.on_message(client, data) = client.write(data)
  end

  def test_echo_and_close_over_tls
    app = lambda do |env|
      env["rack.upgrade"] = Echo if env["rack.upgrade?"] == :websocket
      [200, {}, []]
    end
    with_server(app, lint: false, binds: [ssl_bind("127.0.0.1")]) do |port|
      TLSCertificates.connect(port, @paths["ca"]) do |ssl|
        key = Base64.strict_encode64(Random.bytes(16))
        ssl.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" \
                  "Sec-WebSocket-Key: #{key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
        head = Timeout.timeout(ProcessHelper::PATIENCE) { ssl.gets("\r\n\r\n") }
        assert_match(%r{\AHTTP/1.1 101 }, head)
        ssl.write(WebSocketClient.frame(WebSocketClient::TEXT, "over tls"))
        assert_equal [0x81, 8, "over tls"], read_frame(ssl)
        ssl.write(WebSocketClient.frame(WebSocketClient::CLOSE, [1000].pack("n")))
        assert_equal [0x88, 2, [1000].pack("n")], read_frame(ssl)
      end
    end
  end

  private

  def read_frame(ssl)
    Timeout.timeout(ProcessHelper::PATIENCE) do
      first, length = ssl.read(2).unpack("CC")
      [first, length, ssl.read(length)]
    end
  end
end
