# frozen_string_literal: true

require "test_helper"
require "stringio"
require "heron/attack"
require "support/tls_certificates"

# `heron attack` against a real Heron ssl:// listener: verified with --cacert, unverified with
# --insecure, refused when the certificate cannot be verified.
class AttackTLSContextTest < Minitest::Test
  include ServerHelper

  APP = lambda do |env|
    body = env["rack.url_scheme"]
    [200, { "content-type" => "text/plain", "content-length" => body.bytesize.to_s }, [body]]
  end

  def setup
    @dir = Dir.mktmpdir
    @paths = TLSCertificates.make(@dir, "localhost")
  end

  def teardown
    FileUtils.rm_rf(@dir)
  end

  def server_context
    context = OpenSSL::SSL::SSLContext.new
    context.cert = OpenSSL::X509::Certificate.new(File.read(@paths["localhost"][0]))
    context.key = OpenSSL::PKey.read(File.read(@paths["localhost"][1]))
    context
  end

  def cli(*argv)
    @stdout = StringIO.new
    @stderr = StringIO.new
    Heron::Attack::CLI.new(argv, stdout: @stdout, stderr: @stderr).run
  end

  def with_tls_server(**config, &block)
    cert, key = @paths["localhost"]
    bind = "ssl://127.0.0.1:0?#{URI.encode_www_form(cert: cert, key: key)}"
    with_server(APP, binds: [bind], environment: "production", **config, &block)
  end

  def test_cacert_verifies_the_chain_and_requests_are_served_over_tls
    with_tls_server do |port|
      json = File.join(@dir, "run.json")
      assert_equal 0, cli("https://localhost:#{port}/", "-r", "100", "-n", "20", "--cacert", @paths["ca"], "--json", json), @stderr.string
      report = Heron::Attack::JsonReport.load(json)
      assert_equal({ "200" => 20 }, report["status_codes"])
      assert_equal 20, server_log.scan(%r{"GET / HTTP/1\.1" 200}).size, server_log
    end
  end

  def test_insecure_accepts_a_certificate_no_trusted_ca_signed_and_works_in_several_processes
    with_tls_server do |port|
      assert_equal 0, cli("https://localhost:#{port}/", "-r", "100", "-n", "12", "--insecure", "--processes", "2"), @stderr.string
      assert_match(/^Requests +sent 12 +responses 12 +errors 0/, @stdout.string)
    end
  end

  def test_an_unverifiable_certificate_fails_every_request_with_the_reason
    with_tls_server do |port|
      assert_equal 4, cli("https://localhost:#{port}/", "-r", "100", "-n", "3")
      assert_match(/certificate verify failed/, @stdout.string)
      # The right CA, but the URL names a host the certificate is not for.
      assert_equal 4, cli("https://127.0.0.1:#{port}/", "-r", "100", "-n", "3", "--cacert", @paths["ca"])
      assert_match(/hostname "127\.0\.0\.1" does not match/, @stdout.string)
      refute_match(/"GET \/ HTTP/, server_log)
    end
  end

  def test_an_idle_tls_connection_the_server_closed_is_retried_on_a_new_one
    with_tls_server(keepalive_timeout: 0.2) do |port, server|
      client = Heron::Attack::Client.new(timeout: 5, tls: Heron::Attack::TLSContext.build(cacert: @paths["ca"]))
      target = Heron::Attack::Target.new("GET", "https://localhost:#{port}/")
      statuses = Sync do
        first = client.call(target)
        eventually { server.connection_count.zero? } # the server closed the idle connection
        [first, client.call(target)].map(&:to_a)
      ensure
        client.close
      end
      assert_equal [[200, 5, true]] * 2, statuses
      assert_equal 2, server_log.scan(%r{"GET / HTTP/1\.1" 200}).size
    end
  end

  # OpenSSL 3 reports a peer that closes without close_notify as an error ("unexpected eof"), not
  # as end of stream; servers often close idle keep-alive connections that way.
  def test_an_idle_connection_closed_without_close_notify_is_retried_too
    server = OpenSSL::SSL::SSLServer.new(TCPServer.new("127.0.0.1", 0), server_context)
    port = server.to_io.addr[1]
    served = Queue.new
    peer = Thread.new do
      2.times do |n|
        ssl = server.accept
        ssl.gets("\r\n\r\n")
        ssl.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        served << n
        n.zero? ? ssl.to_io.close : ssl.close # the first: TCP close only, no TLS close_notify
      end
    end
    client = Heron::Attack::Client.new(timeout: 5, tls: Heron::Attack::TLSContext.build(cacert: @paths["ca"]))
    target = Heron::Attack::Target.new("GET", "https://localhost:#{port}/")
    responses = Sync do
      first = client.call(target)
      served.pop # the server answered and closed its side
      [first, client.call(target)].map(&:to_a)
    ensure
      client.close
    end
    assert_equal [[200, 2, true]] * 2, responses
  ensure
    peer&.join(5)
    server&.close
  end

  def test_bad_tls_options_are_usage_errors
    garbage = File.join(@dir, "garbage.pem")
    File.write(garbage, "not a certificate\n")
    { ["--cacert", "/nonexistent.pem"] => "--cacert /nonexistent.pem: No such file or directory",
      ["--cacert", garbage] => "--cacert #{garbage}: no PEM certificate in it",
      ["--cacert", @paths["ca"], "--insecure"] => "give --insecure or --cacert, not both" }.each do |extra, message|
      assert_equal 2, cli("https://localhost:1/", "-r", "1", "-n", "1", *extra), extra.inspect
      assert_match(/\Aheron attack: #{Regexp.escape(message)}/, @stderr.string)
      assert_equal 1, @stderr.string.lines.size
    end
  end
end
