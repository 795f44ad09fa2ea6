# frozen_string_literal: true

require "test_helper"

# Response framing as seen on the wire.
class ResponseWriterTest < Minitest::Test
  class EachBody
    attr_reader :closed

    def initialize(parts) = @parts = parts
    def each(&block) = @parts.each(&block)
    def close = @closed = true
  end

  def text(body, status: 200, headers: {})
    ->(_env) { [status, { "content-type" => "text/plain" }.merge(headers), body] }
  end

  def test_array_body_gets_content_length_and_date
    with_server(text(["Hello", " world"])) do |port|
      status, headers, body = read_response(connect(port).tap { |s| s.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n") })
      assert_equal [200, "11", "Hello world"], [status, headers["content-length"], body]
      assert_match(/\A\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT\z/, headers["date"])
    end
  end

  def test_each_body_without_length_is_chunked_and_closed
    body = EachBody.new(%w[a bb ccc])
    with_server(text(body)) do |port|
      socket = connect(port)
      socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
      status, headers, data = read_response(socket)
      assert_equal [200, "chunked", "abbccc"], [status, headers["transfer-encoding"], data]
      socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_equal 200, read_response(socket)[0], "connection stays usable after a chunked body"
      assert body.closed
    end
  end

  def test_each_body_to_http10_client_is_close_delimited
    with_server(text(EachBody.new(%w[one two]))) do |port|
      response = raw_request(port, "GET / HTTP/1.0\r\n\r\n")
      assert_match(/connection: close\r\n\r\nonetwo\z/, response)
      refute_match(/transfer-encoding/, response)
    end
  end

  def test_app_content_length_is_kept
    with_server(text(EachBody.new(%w[abc]), headers: { "content-length" => "3" })) do |port|
      response = raw_request(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      assert_match(/content-length: 3\r\n/, response)
      assert response.end_with?("\r\n\r\nabc")
    end
  end

  def test_head_204_304_have_no_body
    with_server(text(["body"])) do |port|
      head = raw_request(port, "HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      assert_match(/content-length: 4\r\n/, head)
      assert head.end_with?("\r\n\r\n")
    end
    [204, 304].each do |status|
      with_server(->(_env) { [status, {}, []] }) do |port|
        response = raw_request(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert_match(/\AHTTP\/1.1 #{status} /, response)
        refute_match(/content-length|transfer-encoding/, response)
        assert response.end_with?("\r\n\r\n")
      end
    end
  end

  def test_multiple_values_become_multiple_lines
    app = text(["x"], headers: { "set-cookie" => %w[a=1 b=2] })
    with_server(app) do |port|
      response = raw_request(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      assert_equal ["set-cookie: a=1", "set-cookie: b=2"], response.scan(/^set-cookie: .*(?=\r)/)
    end
  end

  def test_header_with_line_break_becomes_500
    app = text(["x"], headers: { "x-evil" => "a\r\nset-cookie: pwned=1" })
    with_server(app, lint: false) do |port|
      response = raw_request(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_match(/\AHTTP\/1.1 500 /, response)
      refute_match(/pwned/, response)
      assert_match(/invalid response/, server_log)
    end
  end

  def test_streaming_body_keeps_connection_reusable
    stream_body = lambda do |stream|
      stream.write("first ")
      stream << "second"
      stream.close
    end
    with_server(->(_env) { [200, { "content-type" => "text/plain" }, stream_body] }) do |port|
      socket = connect(port)
      2.times do
        socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        status, headers, body = read_response(socket)
        assert_equal [200, "chunked", "first second"], [status, headers["transfer-encoding"], body]
      end
    end
  end

  def test_streaming_body_closed_later_by_another_task
    app = lambda do |_env|
      body = lambda do |stream|
        Async do
          sleep 0.05
          stream.write("late")
          stream.close
        end
      end
      [200, { "content-type" => "text/plain" }, body]
    end
    with_server(app) do |port|
      response = raw_request(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      assert response.end_with?("4\r\nlate\r\n0\r\n\r\n"), response
    end
  end

  def test_body_error_after_the_head_is_logged_reported_and_closes_the_connection
    errors = Queue.new
    body = Object.new
    body.define_singleton_method(:each) do |&blk|
      blk.call("partial")
      raise ArgumentError, "body broke"
    end
    app = lambda do |env|
      env["rack.response_finished"] << ->(_env, _status, _headers, error) { errors << error }
      [200, { "content-type" => "text/plain" }, body]
    end
    with_server(app, lint: false) do |port|
      response = raw_request(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_match(/\AHTTP\/1.1 200 OK\r\n/, response)
      refute response.end_with?("0\r\n\r\n"), "no terminating chunk: the client sees a truncated body"
      assert_equal "body broke", Timeout.timeout(ProcessHelper::PATIENCE) { errors.pop }.message
      assert_match(/response body raised.*body broke \(ArgumentError\)|response body raised.*ArgumentError: body broke/m, server_log)
    end
  end

  def test_body_close_is_called_when_client_goes_away
    closed = Queue.new
    body = Object.new
    body.define_singleton_method(:each) { |&blk| 200.times { blk.call("x" * 65_536) } }
    body.define_singleton_method(:close) { closed << true }
    with_server(->(_env) { [200, { "content-type" => "text/plain" }, body] }) do |port|
      socket = connect(port)
      socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
      socket.read(1000)
      socket.close
      assert Timeout.timeout(ProcessHelper::PATIENCE) { closed.pop }
    end
  end

  # Rack 3 asks for lower-case names; much real code does not. Lint would refuse these, so the
  # app runs without it.
  def test_mixed_case_headers_are_served_lower_cased_and_frame_the_body
    body = EachBody.new(%w[abc])
    app = ->(_env) { [200, { "Content-Type" => "text/plain", "Content-Length" => "3", "X-Multi" => %w[a b] }, body] }
    with_server(app, lint: false) do |port|
      socket = connect(port)
      2.times do
        socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        head = Timeout.timeout(ProcessHelper::PATIENCE) { String.new.tap { |h| h << socket.readpartial(1) until h.end_with?("\r\n\r\n") } }
        assert_match(/\AHTTP\/1.1 200 /, head)
        assert_equal ["content-length: 3"], head.scan(/^content-length: .*(?=\r)/i), "the app's length frames the body"
        refute_match(/transfer-encoding/i, head)
        assert_includes head, "content-type: text/plain\r\n"
        assert_equal ["x-multi: a", "x-multi: b"], head.scan(/^x-multi: .*(?=\r)/)
        assert_equal "abc", Timeout.timeout(ProcessHelper::PATIENCE) { socket.read(3) }
      end
    end
  end

  def test_rack2_newline_joined_set_cookie_becomes_one_line_per_cookie
    app = ->(_env) { [200, { "Set-Cookie" => "a=1\nb=2" }, ["x"]] }
    with_server(app, lint: false) do |port|
      response = raw_request(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      assert_equal ["set-cookie: a=1", "set-cookie: b=2"], response.scan(/^set-cookie: .*(?=\r)/)
    end
  end

  def test_header_with_nul_becomes_500_and_the_log_names_it
    app = text(["x"], headers: { "X-Evil" => "a\0b" })
    with_server(app, lint: false) do |port|
      response = raw_request(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_match(/\AHTTP\/1.1 500 /, response)
      assert_match(/invalid response.*"x-evil" contains a NUL byte/im, server_log)
    end
  end

  def test_101_without_a_stream_or_hijack_ends_the_connection_after_the_head
    with_server(->(_env) { [101, { "upgrade" => "nothing" }, []] }) do |port|
      socket = connect(port)
      socket.write("GET / HTTP/1.1\r\nHost: x\r\nUpgrade: nothing\r\nConnection: upgrade\r\n\r\n")
      head = Timeout.timeout(ProcessHelper::PATIENCE) { String.new.tap { |h| h << socket.readpartial(1) until h.end_with?("\r\n\r\n") } }
      assert_match(/\AHTTP\/1.1 101 /, head)
      assert closed_by_server?(socket), "nothing can be spoken on a connection switched to nothing"
    end
  end
end
