# frozen_string_literal: true

require "test_helper"
require "open3"

# One Rack exchange for both protocols (Heron::Exchange): the same app gives the same answer,
# the same log lines and the same request-id echo over HTTP/1.1 (a raw socket) and HTTP/2
# (curl, h2c with prior knowledge), on one real server.
class HeronExchangeTest < Minitest::Test
  include ServerHelper

  class Boom < StandardError; end

  # A body whose close raises once the response is out.
  class BadClose
    def each = yield("all sent\n")
    def close = raise(Boom, "close broke")
  end

  APP = lambda do |env|
    raise Boom, "kaboom #{env['PATH_INFO']}" if env["PATH_INFO"] == "/boom"
    [200, { "content-type" => "text/plain", "content-length" => "9" }, BadClose.new]
  end

  def http11(port, path, id)
    raw = raw_request(port, "GET #{path} HTTP/1.1\r\nhost: x\r\nx-request-id: #{id}\r\nconnection: close\r\n\r\n")
    head, body = raw.split("\r\n\r\n", 2)
    [head[%r{\AHTTP/1.1 (\d+)}, 1], head[/^x-request-id: ([^\r\n]*)/i, 1], body]
  end

  def h2c(port, path, id)
    out, status = Open3.capture2e("curl", "-sS", "-i", "--max-time", "30", "--http2-prior-knowledge",
                                  "-H", "x-request-id: #{id}", "http://127.0.0.1:#{port}#{path}")
    assert status.success?, out
    head, body = out.split("\r\n\r\n", 2)
    [head[%r{\AHTTP/2 (\d+)}, 1], head[/^x-request-id: ([^\r\n]*)/i, 1], body]
  end

  # Asks `path` over both protocols, each with its own request id, and returns the server's log
  # once both requests' access-log lines are in it.
  def answers_over_both(port, path, status, body)
    name = path.delete("/")
    assert_equal [status, "h1-#{name}", body], http11(port, path, "h1-#{name}")
    assert_equal [status, "h2-#{name}", body], h2c(port, path, "h2-#{name}")
    eventually { server_log.then { |text| text.include?("request_id=h2-#{name}") && text } }
  end

  def test_an_app_error_is_answered_logged_and_echoed_the_same_over_both_protocols
    skip "curl is not installed" unless system("command -v curl >/dev/null")
    with_server(APP, lint: false) do |port|
      log = answers_over_both(port, "/boom", "500", "Internal Server Error\n")
      assert_equal 2, log.scan(/app error on GET \/boom: HeronExchangeTest::Boom: kaboom \/boom$/).size, log
      assert_match(%r{"GET /boom HTTP/1.1" 500 .*request_id=h1-boom}, log)
      assert_match(%r{"GET /boom HTTP/2" 500 .*request_id=h2-boom}, log)
    end
  end

  def test_a_body_whose_close_raises_is_logged_the_same_over_both_protocols
    skip "curl is not installed" unless system("command -v curl >/dev/null")
    with_server(APP, lint: false) do |port|
      log = answers_over_both(port, "/close", "200", "all sent\n")
      assert_equal 2, log.scan(/body.close raised: HeronExchangeTest::Boom: close broke$/).size, log
    end
  end
end
