# frozen_string_literal: true

require "test_helper"
require "open3"
require "tempfile"

# Expect: 100-continue (RFC 9110 §10.1.1), over raw sockets and with curl's real behaviour.
class ContinueTest < Minitest::Test
  CONTINUE = "HTTP/1.1 100 Continue\r\n\r\n"
  READER = ->(env) { [200, { "content-type" => "text/plain" }, ["got #{env['rack.input'].read.bytesize}"]] }
  REFUSER = ->(_env) { [413, { "content-type" => "text/plain" }, ["too big"]] }

  # The seed's middleware (001), unchanged: answers 100 so Heron continues, Unicorn-style.
  class AlwaysRequestBody
    def initialize(app)
      @app = app
    end

    def call(env)
      if env["HTTP_EXPECT"] =~ /100-continue/
        [100, {}, [""]]
      else
        @app.call(env)
      end
    end
  end

  def post_head(length, version: "1.1", extra: "")
    "POST /up HTTP/#{version}\r\nHost: x\r\nContent-Length: #{length}\r\nExpect: 100-continue\r\n#{extra}\r\n"
  end

  def test_lazy_continue_is_sent_when_the_app_reads
    with_server(READER) do |port|
      socket = connect(port)
      socket.write(post_head(5))
      assert socket.wait_readable(3), "server answers without waiting for the body"
      assert_equal CONTINUE, socket.readpartial(CONTINUE.bytesize)
      socket.write("hello")
      assert_equal [200, "got 5"], read_response(socket).values_at(0, 2)
    end
  end

  def test_refusal_without_reading_sends_no_continue_and_closes
    with_server(REFUSER) do |port|
      socket = connect(port)
      socket.write(post_head(2_000_000))
      status, headers, body = read_response(socket)
      assert_equal [413, "close", "too big"], [status, headers["connection"], body]
      assert closed_by_server?(socket)
    end
  end

  def test_eager_mode_sends_continue_before_the_app_runs
    called = Queue.new
    app = ->(env) { called << true; READER.call(env) }
    with_server(app, continue_mode: :eager) do |port|
      socket = connect(port)
      socket.write(post_head(3))
      assert_equal CONTINUE, socket.readpartial(CONTINUE.bytesize)
      socket.write("abc")
      assert_equal "got 3", read_response(socket)[2]
    end
  end

  # The app is called again once 100 Continue is out; its second answer is the response, with
  # the request id echoed as for any other (Heron::Exchange).
  def test_unicorn_style_status_100_from_the_app
    with_server(AlwaysRequestBody.new(READER)) do |port|
      socket = connect(port)
      socket.write(post_head(4, extra: "X-Request-Id: continued-1\r\n"))
      assert_equal CONTINUE, socket.readpartial(CONTINUE.bytesize)
      socket.write("data")
      status, headers, body = read_response(socket)
      assert_equal [200, "got 4", "continued-1"], [status, body, headers["x-request-id"]]
    end
  end

  def test_http10_expect_is_ignored
    with_server(READER) do |port|
      socket = connect(port)
      socket.write(post_head(3, version: "1.0"))
      refute socket.wait_readable(0.3), "no 100 Continue for HTTP/1.0"
      socket.write("abc")
      assert_equal "got 3", read_response(socket)[2]
    end
  end

  def test_no_continue_when_the_body_is_already_arriving
    with_server(READER) do |port|
      response = raw_request(port, post_head(3, extra: "Connection: close\r\n") + "abc")
      refute_includes response, "100 Continue"
      assert response.end_with?("got 3")
    end
  end

  def test_curl_uploads_2mb_without_its_one_second_wait
    with_upload_file do |path|
      with_server(READER) do |port|
        out, err, = curl("--data-binary", "@#{path}", "-H", "Expect: 100-continue", "http://127.0.0.1:#{port}/up")
        assert_equal "got #{2 * 1024 * 1024}", out.split("\n").first
        assert_match(/^< HTTP\/1.1 100 Continue/, err, "curl received 100 Continue instead of timing out")
      end
    end
  end

  def test_curl_to_a_refusing_endpoint_uploads_almost_nothing
    with_upload_file do |path|
      with_server(REFUSER) do |port|
        out, = curl("--data-binary", "@#{path}", "-H", "Expect: 100-continue", "-w", "\n%{http_code} %{size_upload}",
                    "http://127.0.0.1:#{port}/up")
        code, uploaded = out.lines.last.split.map(&:to_i)
        assert_equal 413, code
        assert_operator uploaded, :<, 64 * 1024, "curl sent #{uploaded} bytes of 2 MiB"
      end
    end
  end

  private

  def curl(*args)
    Open3.capture3("curl", "-sv", "--max-time", "10", *args)
  end

  def with_upload_file
    Tempfile.create("upload") do |file|
      file.write("x" * (2 * 1024 * 1024))
      file.flush
      yield file.path
    end
  end
end
