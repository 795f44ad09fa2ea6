# frozen_string_literal: true

require "test_helper"
require "net/http"
require "open3"
require_relative "../../support/tls_certificates"

# Heron serving over TLS (ssl:// binds), with real clients: Net::HTTP, OpenSSL sockets and curl.
class HeronTLSListenerTest < Minitest::Test
  include ServerHelper

  APP = lambda do |env|
    body = [env["rack.url_scheme"], env["HTTPS"], env["SERVER_PORT"], env["PATH_INFO"]].join(" ")
    [200, { "content-type" => "text/plain", "content-length" => body.bytesize.to_s }, [body]]
  end

  include TLSCertificates::Fixture
  NAMES = %w[localhost other.test]

  def bind(*names, **extra) = ssl_bind(*names, **extra)

  def with_tls_server(*names, app: APP, **config, &block)
    extra = config.slice(:min_version)
    with_server(app, binds: [bind(*(names.empty? ? ["localhost"] : names), **extra)], environment: "production",
                     **config.except(:min_version), &block)
  end

  def https(port)
    http = Net::HTTP.new("localhost", port)
    http.ipaddr = "127.0.0.1"
    http.use_ssl = true
    http.ca_file = @paths["ca"]
    http
  end

  def tls_socket(port, hostname: "localhost", **params)
    context = OpenSSL::SSL::SSLContext.new
    context.set_params(ca_file: @paths["ca"], verify_hostname: false, **params)
    ssl = OpenSSL::SSL::SSLSocket.new(TCPSocket.new("127.0.0.1", port), context)
    ssl.hostname = hostname
    ssl.sync_close = true
    ssl.connect
    ssl
  end

  def test_requests_over_tls_see_https_and_keep_alive
    with_tls_server do |port, server|
      assert_equal ["https://127.0.0.1:#{port}"], server.addresses
      https(port).start do |http|
        assert_equal "https on #{port} /a", http.get("/a").body
        assert_equal "https on #{port} /b", http.get("/b").body # same connection
      end
    end
  end

  def test_curl_verifies_the_chain
    with_tls_server do |port, _server|
      out, status = Open3.capture2e("curl", "-sS", "--cacert", @paths["ca"], "--resolve", "localhost:#{port}:127.0.0.1",
                                    "https://localhost:#{port}/curl")
      assert status.success?, out
      assert_equal "https on #{port} /curl", out
    end
  end

  def test_a_client_that_never_handshakes_holds_no_one_up_and_is_cut_at_the_header_timeout
    with_tls_server(header_timeout: 0.5) do |port, _server|
      silent = TCPSocket.new("127.0.0.1", port)
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      assert_equal "https on #{port} /x", https(port).get("/x").body
      assert_equal "", read_all(silent, timeout: 5) # closed by the server
      assert_operator Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, :<, 4
    ensure
      silent&.close
    end
  end

  def test_sni_picks_the_certificate_for_the_name_asked
    with_tls_server("localhost", "other.test") do |port, _server|
      assert_equal "/CN=other.test", tls_socket(port, hostname: "other.test").peer_cert.subject.to_s
      assert_equal "/CN=localhost", tls_socket(port, hostname: "localhost").peer_cert.subject.to_s
      assert_equal "/CN=localhost", tls_socket(port, hostname: "unknown.test").peer_cert.subject.to_s
    end
  end

  def test_min_version_refuses_older_clients
    with_tls_server(min_version: "TLSv1_3") do |port, _server|
      assert_raises(OpenSSL::SSL::SSLError) { tls_socket(port, max_version: OpenSSL::SSL::TLS1_2_VERSION) }
      assert_equal "TLSv1.3", tls_socket(port).ssl_version
    end
    with_tls_server do |port, _server|
      assert_equal "TLSv1.2", tls_socket(port, max_version: OpenSSL::SSL::TLS1_2_VERSION).ssl_version
    end
  end

  def test_plain_http_on_the_tls_port_is_closed_and_the_server_goes_on
    with_tls_server do |port, _server|
      raw_request(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", timeout: 3)
      assert_equal "https on #{port} /after", https(port).get("/after").body
    end
  end

  def test_reload_serves_new_certificates_to_new_connections_only
    with_tls_server do |port, server|
      open_one = tls_socket(port)
      old_serial = open_one.peer_cert.serial
      TLSCertificates.make(@dir, "localhost") # new key and certificate, same CA
      server.listeners.each(&:reload)
      refute_equal old_serial, tls_socket(port).peer_cert.serial
      open_one.write("GET /still HTTP/1.1\r\nHost: localhost\r\n\r\n") # no port: the https default
      assert_match(%r{https on 443 /still\z}, read_response(open_one))
    ensure
      open_one&.close
    end
  end

  private

  def read_response(ssl)
    data = +""
    data << ssl.readpartial(4096) until data.include?("\r\n\r\n") && data.end_with?("/still")
    data
  end
end
