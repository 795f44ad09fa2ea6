# frozen_string_literal: true

require "test_helper"
require "open3"

# `lowlevel_error_handler`: when the app raises, the handler gets the exception, the request's
# env and the status Heron answers, over HTTP/1.1 and HTTP/2 (also when the body raises once the
# head is out); a Rack response it returns is sent;
# a handler that raises is logged and the client still gets Heron's 500; an error the handler is
# not for (a body over max_body_size) reaches it with its own status, and so does a request
# refused before the app (a head Heron cannot parse: 400, 414, ...).
class HeronResponseAppFailureTest < Minitest::Test
  include ServerHelper

  class Boom < StandardError; end

  APP = lambda do |env|
    env["rack.input"].read
    raise Boom, "kaboom #{env['PATH_INFO']}"
  end

  def setup
    @reports = Queue.new
  end

  def reporter
    reports = @reports
    ->(error, env, status) { reports << [error.class, error.message, env["PATH_INFO"], env["heron.request_id"], status] }
  end

  # The handler ran before the response went out, so it has reported by the time one is read.
  def report
    refute @reports.empty?, "the handler was not called:\n#{server_log}"
    @reports.pop
  end

  def test_the_handler_gets_the_error_the_env_and_the_status_over_http11
    with_server(APP, lowlevel_error_handler: reporter) do |port|
      raw = raw_request(port, "GET /orders HTTP/1.1\r\nhost: x\r\nx-request-id: abc-123\r\n\r\n")
      assert raw.start_with?("HTTP/1.1 500 Internal Server Error\r\n"), raw
      assert_equal [Boom, "kaboom /orders", "/orders", "abc-123", 500], report
      assert_match(/app error on GET \/orders/, server_log)
    end
  end

  def test_the_handler_gets_the_error_over_http2
    with_server(APP, lowlevel_error_handler: reporter) do |port|
      out, status = Open3.capture2e("curl", "-sS", "-i", "--max-time", "30", "--http2-prior-knowledge", "http://127.0.0.1:#{port}/h2")
      assert status.success?, out
      assert_match(%r{\AHTTP/2 500}, out)
      assert_equal [Boom, "kaboom /h2", "/h2", 500], report.values_at(0, 1, 2, 4)
    end
  end

  def test_a_response_the_handler_returns_is_sent
    handler = ->(_error, _env, status) { [status, { "content-type" => "text/plain" }, ["sorry, we were told\n"]] }
    with_server(APP, lowlevel_error_handler: handler) do |port|
      raw = raw_request(port, "GET / HTTP/1.1\r\nhost: x\r\n\r\n")
      assert raw.start_with?("HTTP/1.1 500 "), raw
      assert raw.end_with?("sorry, we were told\n"), raw
    end
  end

  def test_a_lambda_taking_only_the_error_gets_only_the_error
    reports = @reports
    with_server(APP, lowlevel_error_handler: ->(error) { reports << error.message }) do |port|
      raw = raw_request(port, "GET /one HTTP/1.1\r\nhost: x\r\n\r\n")
      assert raw.start_with?("HTTP/1.1 500 Internal Server Error\r\n"), raw
      assert_equal "kaboom /one", report
      refute_includes server_log, "lowlevel_error_handler raised"
    end
  end

  def test_a_handler_that_raises_leaves_the_500_and_is_logged
    handler = ->(_error, _env, _status) { raise ArgumentError, "the reporter is down" }
    with_server(APP, lowlevel_error_handler: handler) do |port|
      2.times do # the server keeps serving after it
        raw = raw_request(port, "GET /x HTTP/1.1\r\nhost: x\r\n\r\n")
        assert raw.start_with?("HTTP/1.1 500 Internal Server Error\r\n"), raw
        assert raw.end_with?("Internal Server Error\n"), raw
      end
      assert_match(/lowlevel_error_handler raised while handling HeronResponseAppFailureTest::Boom on GET \/x; sending Heron's 500/, server_log)
      assert_includes server_log, "ArgumentError: the reporter is down"
    end
  end

  # The head is out when the body raises: the handler is told, the client sees the connection
  # end (HTTP/1.1) or the stream reset (HTTP/2).
  def test_a_body_that_raises_while_sent_reaches_the_handler
    app = lambda do |_env|
      body = Enumerator.new do |out|
        out << "first part\n"
        raise Boom, "the body broke"
      end
      [200, { "content-type" => "text/plain" }, body]
    end
    with_server(app, lint: false, lowlevel_error_handler: reporter) do |port|
      raw = raw_request(port, "GET /stream HTTP/1.1\r\nhost: x\r\n\r\n")
      assert raw.start_with?("HTTP/1.1 200 OK\r\n"), raw
      assert_equal [Boom, "the body broke", "/stream", 500], report.values_at(0, 1, 2, 4)
      out, = Open3.capture2e("curl", "-sS", "--max-time", "15", "--http2-prior-knowledge", "http://127.0.0.1:#{port}/stream")
      assert_includes out, "INTERNAL_ERROR", "the stream is reset at once, not left open" # (curl may drop the part it got)
      assert_equal [Boom, "the body broke", "/stream", 500], report.values_at(0, 1, 2, 4)
    end
  end

  # As under Puma, a request Heron refuses before the app (a head it cannot parse) reaches the
  # handler too, with what was parsed of the env and the status; the client still gets Heron's 400.
  def test_a_head_that_cannot_be_parsed_reaches_the_handler_as_400
    with_server(APP, lowlevel_error_handler: reporter) do |port|
      raw = raw_request(port, "GET /bad HTTP/1.1\r\nhost: x\r\nno colon here\r\n\r\n")
      assert raw.start_with?("HTTP/1.1 400 "), raw
      error, _message, _path, _id, status = report
      assert_equal [Heron::HTTPParser::BadRequest, 400], [error, status]
    end
  end

  def test_a_head_over_a_limit_reaches_the_handler_with_its_status
    with_server(APP, lowlevel_error_handler: reporter, max_target_bytes: 64) do |port|
      raw = raw_request(port, "GET /#{'a' * 100} HTTP/1.1\r\nhost: x\r\n\r\n")
      assert raw.start_with?("HTTP/1.1 414 "), raw
      assert_equal [Heron::HTTPParser::URITooLong, 414], report.values_at(0, 4)
    end
  end

  def test_a_body_over_the_limit_reaches_the_handler_as_413
    with_server(APP, lowlevel_error_handler: reporter, max_body_size: 10) do |port|
      raw = raw_request(port, "POST /upload HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n14\r\n#{'x' * 20}\r\n0\r\n\r\n")
      assert raw.start_with?("HTTP/1.1 413 "), raw
      assert_equal [Heron::Request::Input::TooLarge, "/upload", 413], report.values_at(0, 2, 4)
    end
  end
end
