# frozen_string_literal: true

require "test_helper"

# Malformed and smuggling-style requests get the right 4xx/5xx and a closed connection, and the
# app never sees them.
class MalformedRequestsTest < Minitest::Test
  H = "Host: x\r\n"
  CASES = {
    "obs-fold" => ["GET / HTTP/1.1\r\n#{H}X-A: 1\r\n  continued\r\n\r\n", 400],
    "space before colon" => ["GET / HTTP/1.1\r\n#{H}X-A : 1\r\n\r\n", 400],
    "bare CR in value" => ["GET / HTTP/1.1\r\n#{H}X-A: a\rb\r\n\r\n", 400],
    "bare LF line ending" => ["GET / HTTP/1.1\n#{H}\r\n", 400],
    "NUL in value" => ["GET / HTTP/1.1\r\n#{H}X-A: a\0b\r\n\r\n", 400],
    "control char in target" => ["GET /a\x01b HTTP/1.1\r\n#{H}\r\n", 400],
    "invalid token in name" => ["GET / HTTP/1.1\r\n#{H}X(A): 1\r\n\r\n", 400],
    "invalid method" => ["G@T / HTTP/1.1\r\n#{H}\r\n", 400],
    "missing Host on 1.1" => ["GET / HTTP/1.1\r\n\r\n", 400],
    "repeated Host" => ["GET / HTTP/1.1\r\n#{H}#{H}\r\n", 400],
    "conflicting Content-Length" => ["POST / HTTP/1.1\r\n#{H}Content-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400],
    "repeated Content-Length" => ["POST / HTTP/1.1\r\n#{H}Content-Length: 1\r\nContent-Length: 1\r\n\r\na", 400],
    "signed Content-Length" => ["POST / HTTP/1.1\r\n#{H}Content-Length: +1\r\n\r\na", 400],
    "non-numeric Content-Length" => ["POST / HTTP/1.1\r\n#{H}Content-Length: 1a\r\n\r\na", 400],
    "CL with TE" => ["POST / HTTP/1.1\r\n#{H}Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400],
    "TE not ending in chunked" => ["POST / HTTP/1.1\r\n#{H}Transfer-Encoding: chunked, gzip\r\n\r\n", 400],
    "TE unknown coding" => ["POST / HTTP/1.1\r\n#{H}Transfer-Encoding: gzip, chunked\r\n\r\n", 501],
    "TE on HTTP/1.0" => ["POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400],
    "target too long" => ["GET /#{'a' * 9000} HTTP/1.1\r\n#{H}\r\n", 414],
    "too many fields" => ["GET / HTTP/1.1\r\n#{H}#{(1..101).map { |i| "X-#{i}: 1\r\n" }.join}\r\n", 431],
    "header block too big" => ["GET / HTTP/1.1\r\n#{H}X-A: #{'a' * 70_000}\r\n\r\n", 431],
    "HTTP/2.0" => ["GET / HTTP/2.0\r\n#{H}\r\n", 505],
    "HTTP/0.9 line" => ["GET / HTTP/0.9\r\n#{H}\r\n", 505],
    "garbage version" => ["GET / HTTX/1.1\r\n#{H}\r\n", 400],
    "Expect other than 100-continue" => ["POST / HTTP/1.1\r\n#{H}Expect: 200-ok\r\nContent-Length: 1\r\n\r\na", 417],
    "Content-Length over max_body_size" => ["POST / HTTP/1.1\r\n#{H}Content-Length: 2000\r\n\r\n", 413],
  }.freeze
  # Broken chunked framing is only seen while the app streams the body, so the app is called.
  BODY_CASES = {
    "chunk without CRLF" => ["POST / HTTP/1.1\r\n#{H}Transfer-Encoding: chunked\r\n\r\n2\r\nabcd\r\n0\r\n\r\n", 400],
    "chunk size overflow" => ["POST / HTTP/1.1\r\n#{H}Transfer-Encoding: chunked\r\n\r\n#{'f' * 20}\r\n", 400],
    "bad chunk size" => ["POST / HTTP/1.1\r\n#{H}Transfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n", 400],
  }.freeze

  def setup
    @calls = []
    app = lambda do |env|
      @calls << env["PATH_INFO"]
      env["rack.input"].read
      [200, { "content-type" => "text/plain" }, ["ok"]]
    end
    @server = start_server(app, max_body_size: 1000)
    @port = @server.bound_ports.first
  end

  def teardown
    stop_server(@server)
  end

  CASES.merge(BODY_CASES).each do |name, (request, status)|
    define_method("test_#{name.tr(' ', '_')}") do
      socket = connect(@port)
      socket.write(request)
      response = read_all(socket)
      assert_match(/\AHTTP\/1.1 #{status} /, response, "#{name}: #{response[0, 80].inspect}")
      assert_match(/^connection: close\r\n/, response)
      assert_equal 1, response.scan("HTTP/1.1").size, "exactly one response"
      assert_empty @calls, "the app must not see a rejected request" unless BODY_CASES.key?(name)
    ensure
      socket&.close
    end
  end

  def test_chunked_body_over_max_body_size_is_413
    socket = connect(@port)
    socket.write("POST /big HTTP/1.1\r\n#{H}Transfer-Encoding: chunked\r\n\r\n")
    begin
      4.times { socket.write("200\r\n#{'x' * 512}\r\n") }
      socket.write("0\r\n\r\n")
    rescue Errno::EPIPE, Errno::ECONNRESET
      nil # the server may answer and stop reading before the client finishes sending
    end
    response = read_all(socket)
    assert_match(/\AHTTP\/1.1 413 /, response)
    assert_match(/^connection: close\r\n/, response)
  ensure
    socket&.close
  end

  def test_server_keeps_serving_after_garbage
    raw_request(@port, "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03".b + Random.bytes(200))
    response = raw_request(@port, "GET /fine HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert_match(/\AHTTP\/1.1 200 OK/, response)
  end

  # Deliberate liberalities (docs/strictness.md): a higher HTTP/1 minor version is served as 1.1,
  # on a connection that stays open; raw UTF-8 in the target reaches the app as sent.
  def test_http_1_2_is_served_as_1_1_and_raw_utf8_in_the_path_reaches_the_app
    socket = connect(@port)
    socket.write("GET /caf\xC3\xA9?q=\xE2\x9C\x93 HTTP/1.2\r\n#{H}\r\n".b) # well-formed UTF-8 (a lone \xFF is a 400)
    status, headers, body = Timeout.timeout(ProcessHelper::PATIENCE) { read_response(socket) }
    assert_equal [200, "ok", nil], [status, body, headers["connection"]]
    socket.write("GET /second HTTP/1.1\r\n#{H}\r\n")
    assert_equal 200, Timeout.timeout(ProcessHelper::PATIENCE) { read_response(socket) }[0], "the connection is kept alive as 1.1"
    assert_equal ["/caf\xC3\xA9".b, "/second"], @calls
  ensure
    socket&.close
  end
end
