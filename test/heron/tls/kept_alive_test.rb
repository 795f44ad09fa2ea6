# frozen_string_literal: true

require "test_helper"
require_relative "../../support/tls_certificates"

# A kept-alive TLS connection waits for its next request in its fiber (it never parks: OpenSSL
# may hold decrypted bytes the kernel does not report), up to keepalive_timeout, with no
# scheduler timer of its own (Server::Parking#kept_wait): its next request is served, its
# silence ends it at keepalive_timeout, and a graceful stop does not wait for it.
class HeronTLSKeptAliveTest < Minitest::Test
  include TLSCertificates::Fixture

  NAMES = ["127.0.0.1"].freeze
  OK = ->(_env) { [200, { "content-type" => "text/plain", "content-length" => "2" }, ["ok"]] }
  REQUEST = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"

  def test_requests_that_come_apart_are_served_and_silence_ends_the_connection_at_keepalive_timeout
    with_server(OK, lint: false, binds: [ssl_bind("127.0.0.1")], keepalive_timeout: 1) do |port|
      TLSCertificates.connect(port, @paths["ca"]) do |tls|
        3.times do
          tls.write(REQUEST)
          assert_equal "ok", read_response(tls)
          sleep 0.1 # a client that pauses between requests (the server waits, it does not spin)
        end
        started = Heron::Clock.now
        assert_nil Timeout.timeout(ProcessHelper::PATIENCE) { tls.read(1) }, "closed once keepalive_timeout passed"
        assert_operator Heron::Clock.now - started, :>=, 0.5, "not before keepalive_timeout"
      end
    end
  end

  def test_a_graceful_stop_closes_a_waiting_tls_connection_at_once
    server = start_server(OK, lint: false, binds: [ssl_bind("127.0.0.1")], keepalive_timeout: 600)
    TLSCertificates.connect(server.bound_ports.first, @paths["ca"]) do |tls|
      tls.write(REQUEST)
      assert_equal "ok", read_response(tls)
      server.stop(graceful: true)
      assert @server_thread.join(ProcessHelper::PATIENCE), "the stop did not wait for keepalive_timeout"
      assert_nil Timeout.timeout(ProcessHelper::PATIENCE) { tls.read(1) }
    end
  ensure
    stop_server(server) if @server_thread&.alive?
  end

  private

  # Reads one response with a 2-byte body and returns the body.
  def read_response(tls)
    head = +""
    head << tls.readpartial(4096) until head.include?("\r\n\r\n")
    head << tls.readpartial(4096) until head.end_with?("ok")
    head.split("\r\n\r\n", 2).last
  end
end
