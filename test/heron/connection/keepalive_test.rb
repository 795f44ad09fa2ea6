# frozen_string_literal: true

require "test_helper"

# Keep-alive and pipelining over raw sockets.
class KeepaliveTest < Minitest::Test
  ECHO = lambda do |env|
    body = "#{env['REQUEST_METHOD']} #{env['PATH_INFO']}?#{env['QUERY_STRING']} #{env['rack.input'].read}"
    [200, { "content-type" => "text/plain" }, [body]]
  end

  def test_http11_connection_is_reused
    with_server(ECHO) do |port|
      socket = connect(port)
      3.times do |i|
        socket.write("GET /n#{i} HTTP/1.1\r\nHost: x\r\n\r\n")
        status, headers, body = read_response(socket)
        assert_equal [200, "GET /n#{i}? "], [status, body]
        refute headers.key?("connection")
      end
    end
  end

  # A bodiless request on a kept-alive connection makes neither a Heron::Request (the finished
  # one's object is reused) nor a rack.input (one frozen empty input per reactor thread), unless its
  # after-reply callbacks still hold the last one.
  def test_requests_after_the_first_reuse_the_request_and_share_the_empty_input
    app = lambda do |env|
      env["rack.response_finished"] << ->(*) {} if env["PATH_INFO"] == "/callback"
      [200, { "content-type" => "text/plain" }, ["ok"]]
    end
    with_server(app) do |port|
      socket = connect(port)
      assert_equal [0, 0], made_per_ten(socket, "/"), "no Request or Input per request"
      assert_equal 10, made_per_ten(socket, "/callback")[0], "a request its callbacks still hold is not reused"
    end
  end

  def made_per_ten(socket, path)
    request = "GET #{path} HTTP/1.1\r\nHost: x\r\n\r\n"
    socket.write(request) && read_response(socket) # the first may make them
    GC.disable
    before = [Heron::Request, Heron::Request::Input].map { |kind| ObjectSpace.each_object(kind).count }
    10.times { socket.write(request) && assert_equal(200, read_response(socket)[0]) }
    [Heron::Request, Heron::Request::Input].zip(before).map { |kind, count| ObjectSpace.each_object(kind).count - count }
  ensure
    GC.enable
  end

  def test_http10_closes_unless_keep_alive_asked
    with_server(ECHO) do |port|
      response = raw_request(port, "GET / HTTP/1.0\r\n\r\n")
      assert_match(/\AHTTP\/1.1 200 OK\r\n/, response)
      assert_match(/^connection: close\r\n/, response)
      socket = connect(port)
      socket.write("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
      assert_equal "keep-alive", read_response(socket)[1]["connection"]
      socket.write("GET /b HTTP/1.0\r\n\r\n")
      assert_equal "GET /b? ", read_response(socket)[2]
      assert closed_by_server?(socket)
    end
  end

  def test_connection_close_from_client_is_honoured
    with_server(ECHO) do |port|
      socket = connect(port)
      socket.write("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      assert_equal "close", read_response(socket)[1]["connection"]
      assert closed_by_server?(socket)
    end
  end

  def test_pipelined_requests_are_answered_in_order
    with_server(ECHO) do |port|
      socket = connect(port)
      socket.write("POST /1 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc" \
                   "GET /2?q=1 HTTP/1.1\r\nHost: x\r\n\r\n" \
                   "POST /3 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n")
      bodies = 3.times.map { read_response(socket)[2] }
      assert_equal ["POST /1? abc", "GET /2?q=1 ", "POST /3? hi"], bodies
    end
  end

  def test_unread_body_is_discarded_so_the_next_request_parses
    app = ->(_env) { [200, { "content-type" => "text/plain" }, ["ignored body"]] }
    with_server(app) do |port|
      socket = connect(port)
      socket.write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
      assert_equal 200, read_response(socket)[0]
      socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_equal [200, "ignored body"], read_response(socket).values_at(0, 2)
    end
  end

  def test_body_too_big_to_discard_closes_after_response
    app = ->(_env) { [200, { "content-type" => "text/plain" }, ["no"]] }
    with_server(app, discard_body_limit: 10, prebuffer_body: 0) do |port| # the app answers before the body came
      socket = connect(port)
      socket.write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n#{'x' * 1000}")
      assert_equal 200, read_response(socket)[0]
      assert closed_by_server?(socket)
    end
  end
end
