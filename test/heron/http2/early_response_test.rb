# frozen_string_literal: true

require "test_helper"
require "open3"
require "tempfile"

# An HTTP/2 request the app answers before its body has all come (issue 28): the stream ends
# at once for real clients, where it waited keepalive_timeout with the client blocked on a
# closed flow-control window. Within discard_body_limit the rest of the body is dropped as it
# comes and the upload finishes cleanly (curl exits 0); past it the stream is reset with
# NO_ERROR (nghttp takes the response; curl 7.88 reports the reset, with the response printed).
# The bound is not a speed target: the server's keepalive_timeout is set far above it, so a
# stream left waiting fails it.
class HeronHTTP2EarlyResponseTest < Minitest::Test
  include ServerHelper

  APP = ->(_env) { [200, { "content-type" => "text/plain" }, ["early\n"]] }
  BOUND = 30
  CONFIG = { keepalive_timeout: 120, lint: false }.freeze

  def setup
    @body = Tempfile.new(%w[early .bin])
  end

  def teardown
    @body.close!
  end

  def test_curl_finishes_an_upload_within_discard_body_limit_cleanly
    upload(512 * 1024) # eight initial windows: the client needs the dropped bytes' window back
    with_server(APP, **CONFIG, discard_body_limit: 1024 * 1024) do |port|
      out, status = client("curl", "-sS", "--max-time", BOUND.to_s, "--http2-prior-knowledge",
                        "--data-binary", "@#{@body.path}", "http://127.0.0.1:#{port}/")
      assert status.success?, out
      assert_equal "early\n", out
    end
  end

  def test_nghttp_gets_the_response_and_the_stream_ends_past_discard_body_limit
    upload(2 * 1024 * 1024)
    with_server(APP, **CONFIG) do |port| # discard_body_limit: 64 KiB
      out, status = client("nghttp", "--timeout=#{BOUND}", "-d", @body.path, "http://127.0.0.1:#{port}/")
      assert status.success?, out
      assert_equal "early\n", out
    end
  end

  def test_curl_ends_past_discard_body_limit_with_the_response_printed
    upload(2 * 1024 * 1024)
    with_server(APP, **CONFIG) do |port|
      out, status = client("curl", "-sS", "--max-time", BOUND.to_s, "--http2-prior-knowledge",
                        "--data-binary", "@#{@body.path}", "http://127.0.0.1:#{port}/")
      refute_equal 28, status.exitstatus, "curl timed out: the stream was left waiting\n#{out}"
      assert_includes out, "early\n"
    end
  end

  private

  def upload(bytes)
    @body.write("x" * bytes)
    @body.flush
  end

  # Runs a client (each is given BOUND seconds: a stream left waiting for keepalive_timeout
  # would hold it that long).
  def client(*command) = Open3.capture2e(*command)
end
