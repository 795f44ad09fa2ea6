# frozen_string_literal: true

require "test_helper"
require "open3"
require "openssl"
require "base64"
require_relative "../../support/tls_certificates"

# Real HTTP/2 peers against a Heron ssl:// listener: nghttp (nghttp2-client) negotiates h2 by
# ALPN and posts a body, and a headless Chromium loads a page and its script over
# https://localhost with h2. Chromium trusts the test certificate by its key's pin
# (--ignore-certificate-errors-spki-list), not by turning verification off.
class HeronHTTP2PeersTest < Minitest::Test
  include ServerHelper

  APP = lambda do |env|
    protocol = env["SERVER_PROTOCOL"]
    case env["PATH_INFO"]
    when "/app.js"
      [200, { "content-type" => "text/javascript" }, ["document.getElementById('js').textContent = 'script over #{protocol}';"]]
    when "/echo"
      [200, { "content-type" => "text/plain" }, ["#{protocol} #{env['REQUEST_METHOD']} #{env['rack.input'].read.bytesize}"]]
    else
      [200, { "content-type" => "text/html" },
       ["<!doctype html><title>h2</title><p id=page>page over #{protocol}</p><p id=js>no script</p><script src=/app.js></script>"]]
    end
  end

  def setup
    @dir = Dir.mktmpdir
    @paths = TLSCertificates.make(@dir, "localhost", "127.0.0.1")
  end

  def teardown
    FileUtils.rm_rf(@dir)
  end

  def with_tls_server(name, &block)
    cert, key = @paths[name]
    with_server(APP, binds: ["ssl://127.0.0.1:0?#{URI.encode_www_form(cert: cert, key: key)}"], environment: "production", &block)
  end

  def test_nghttp_negotiates_h2_and_sends_a_body
    skip "nghttp is not installed (bin/setup installs nghttp2-client)" unless system("command -v nghttp >/dev/null")
    File.write(body = File.join(@dir, "body"), "x" * 100_000)
    with_tls_server("127.0.0.1") do |port|
      out, status = Open3.capture2e("nghttp", "-v", "-d", body, "https://127.0.0.1:#{port}/echo")
      assert status.success?, out
      assert_includes out, "The negotiated protocol: h2"
      assert_match(%r{^HTTP/2 POST 100000(\[|$)}, out) # the body (no newline), then nghttp's next log line
    end
  end

  def test_headless_chromium_loads_a_page_and_its_script_over_h2
    chromium = %w[chromium chromium-browser].find { |name| system("command -v #{name} >/dev/null") }
    skip "chromium is not installed" unless chromium
    with_tls_server("localhost") do |port|
      out, err, status = Open3.capture3(chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                        "--user-data-dir=#{File.join(@dir, 'profile')}", "--ignore-certificate-errors-spki-list=#{pin}",
                                        "--dump-dom", "https://localhost:#{port}/")
      assert status.success?, err
      assert_includes out, "page over HTTP/2"
      assert_includes out, "script over HTTP/2", "the script ran, fetched over h2 on the same page load"
      assert_match(%r{"GET /app.js HTTP/2" 200 .*HeadlessChrome}, server_log)
    end
  end

  private

  # The base64 SHA-256 of the localhost certificate's public key (SubjectPublicKeyInfo).
  def pin
    certificate = OpenSSL::X509::Certificate.new(File.read(@paths["localhost"][0]))
    Base64.strict_encode64(OpenSSL::Digest.digest("SHA256", certificate.public_key.public_to_der))
  end
end
