# frozen_string_literal: true

require "test_helper"
require_relative "../../support/tls_certificates"

# A TLS client that goes away mid-request without close_notify (OpenSSL: "SSL_read: unexpected
# eof while reading") is a client gone, as a TCP reset is: the connection closes quietly,
# whoever was reading, and nothing is logged as an app error.
class HeronTLSClientAbortTest < Minitest::Test
  include TLSCertificates::Fixture

  NAMES = ["localhost"].freeze

  def test_an_abort_while_the_app_reads_the_body_is_a_quiet_close
    reading = Thread::Queue.new
    seen = Thread::Queue.new
    app = lambda do |env|
      reading << true
      input = env["rack.input"]
      size = 0
      if env["PATH_INFO"] == "/whole" then size = input.read.bytesize
      else buffer = +"" and (size += buffer.bytesize while input.read(4096, buffer))
      end
      [200, {}, [size.to_s]]
    rescue StandardError => e
      seen << e
      raise
    end
    with_server(app, lint: false, binds: [ssl_bind("localhost")]) do |port, _server|
      %w[/whole /buffered].each do |path|
        tls = tls_client(port)
        tls.write("POST #{path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000\r\n\r\n#{'x' * 1000}")
        reading.pop
        tls.to_io.shutdown(Socket::SHUT_WR) # a FIN without close_notify (a close would reset: unread tickets)
        error = seen.pop
        tls.to_io.close
        assert_kind_of EOFError, error, "#{path}: the app's read ends as a body cut short does over TCP"
      end
      refute_match(/app error|SSL_read|unexpected eof/i, server_log)
    end
  end

  private

  def tls_client(port)
    context = OpenSSL::SSL::SSLContext.new
    context.ca_file = @paths["ca"]
    context.verify_mode = OpenSSL::SSL::VERIFY_PEER
    socket = OpenSSL::SSL::SSLSocket.new(TCPSocket.new("127.0.0.1", port), context)
    socket.hostname = "localhost"
    socket.sync_close = true
    socket.connect
    socket
  end
end
