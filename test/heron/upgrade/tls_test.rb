# frozen_string_literal: true

require "test_helper"
require "base64"
require_relative "../../support/tls_certificates"
require_relative "../../support/websocket_client"
require_relative "../../support/upgrade_app"

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

  # Over TLS the connection waits in its fiber, not parked: a close from another thread still
  # sends the close frame at once and closes a client that never answers within its close wait
  # (5 s), not at the ping deadline.
  def test_a_close_from_another_thread_ends_a_silent_client_promptly
    opened = Queue.new
    with_server(UpgradeApp.with(UpgradeApp.handing_to(opened)), lint: false, binds: [ssl_bind("127.0.0.1")], websocket_ping_interval: 600) do |port|
      TLSCertificates.connect(port, @paths["ca"]) do |ssl|
        ssl.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" \
                  "Sec-WebSocket-Key: #{Base64.strict_encode64(Random.bytes(16))}\r\nSec-WebSocket-Version: 13\r\n\r\n")
        assert_match(%r{\AHTTP/1.1 101 }, Timeout.timeout(ProcessHelper::PATIENCE) { ssl.gets("\r\n\r\n") })
        client = Timeout.timeout(ProcessHelper::PATIENCE) { opened.pop }
        Thread.new { client.close }.join
        assert_equal [0x88, 2, [1000].pack("n")], read_frame(ssl)
        assert_nil Timeout.timeout(60) { ssl.read(1) }, "a client that never answers is closed, long before the ping"
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
