# frozen_string_literal: true

require "test_helper"
require "socket"
require "heron/http2/env_builder"

# The HTTP/2 part of a request's env, built in one pass over the decoded fields on a real
# connection's Request::EnvBuilder: the request line from the pseudo-headers, the fields as
# HTTP/1.1's parser names them, and a malformed request refused however its names were seen
# before (the names' env keys are remembered per process).
class HeronHTTP2EnvBuilderTest < Minitest::Test
  Malformed = Heron::HTTP2::EnvBuilder::Malformed

  def setup
    @server = TCPServer.new("127.0.0.1", 0)
    @client = TCPSocket.new("127.0.0.1", @server.addr[1])
    @socket = @server.accept
    @builder = Heron::HTTP2::EnvBuilder.new(Heron::Request::EnvBuilder.new({ "rack.version" => [3] }, @socket, Heron::Configuration.new))
  end

  def teardown
    [@socket, @client, @server].each(&:close)
  end

  def request(*fields) = [[":method", "GET"], [":scheme", "https"], [":authority", "example.com"], [":path", "/a/b?x=1&y"], *fields]

  def test_the_request_line_and_fields
    env = @builder.build(request(["content-type", "text/plain"], ["content-length", "3"], ["cookie", "a=1"], ["cookie", "b=2"],
                                 ["accept", "x"], ["accept", "y"], ["x_forwarded_for", "1.2.3.4"], ["x-cafe", "\u00e9"]))
    assert_equal ["GET", "HTTP/2", "/a/b?x=1&y", "/a/b", "x=1&y"], env.values_at("REQUEST_METHOD", "SERVER_PROTOCOL", "REQUEST_URI", "PATH_INFO", "QUERY_STRING")
    assert_equal ["text/plain", "3", "a=1; b=2", "x, y", "example.com"], env.values_at("CONTENT_TYPE", "CONTENT_LENGTH", "HTTP_COOKIE", "HTTP_ACCEPT", "HTTP_HOST")
    refute env.key?("HTTP_X_FORWARDED_FOR"), "a name with _ is dropped, as over HTTP/1.1"
    assert_equal "\u00e9".b, env["HTTP_X_CAFE"]
    assert_equal Encoding::BINARY, env["HTTP_X_CAFE"].encoding
    env = @builder.build([[":method", "GET"], [":scheme", "http"], [":path", "/plain"], ["host", "h.test"]])
    assert_equal ["/plain", "", "h.test"], env.values_at("PATH_INFO", "QUERY_STRING", "HTTP_HOST")
    env["PATH_INFO"] << "/changed" # the app's to change
  end

  # The same frozen fields again (HTTP2::Decoder's, for a repeated header block) add what they
  # added last time without reading each field again; the app's PATH_INFO and QUERY_STRING are
  # its own each time.
  def test_the_same_frozen_fields_again_are_not_read_again
    fields = request(["accept", "x"], ["cookie", "a=1"]).map(&:freeze).freeze
    first = @builder.build(fields)
    first["PATH_INFO"] << "/changed"
    first["QUERY_STRING"] << "&z"
    fills = 0 # the fields are read by RequestFields.fill, in C
    trace = TracePoint.new(:c_call) { |t| fills += 1 if t.method_id == :fill && t.defined_class == Heron::HTTP2::RequestFields.singleton_class }
    second = trace.enable { @builder.build(fields) }
    assert_equal ["/a/b", "x=1&y", "GET", "x", "a=1", "example.com"],
                 second.values_at("PATH_INFO", "QUERY_STRING", "REQUEST_METHOD", "HTTP_ACCEPT", "HTTP_COOKIE", "HTTP_HOST")
    assert_equal 0, fills, "fields read again"
    refute_same first["PATH_INFO"], second["PATH_INFO"]
    second["PATH_INFO"] << "/mine" # mutable
    other = @builder.build(request(["accept", "y"]).map(&:freeze).freeze)
    assert_equal ["/a/b", "y"], other.values_at("PATH_INFO", "HTTP_ACCEPT")
  end

  def test_malformed_requests_are_refused_even_for_names_seen_before
    @builder.build(request(["te", "trailers"], ["x-seen", "1"]))
    [request(["connection", "keep-alive"]), request(["te", "gzip"]), request(["X-Seen", "1"]),
     request(["x-caf\u00e9", "1"]), request(["x seen", "1"]), request(["x:seen", "1"]), request(["", "1"]), # not tokens (RFC 9113 §8.2.1)
     request([":path", "/again"]), request(["x-seen", "1"], [":method", "GET"]), request([":protocol", "websocket"]),
     [[":method", "GET"], [":scheme", "http"]], [[":method", "GET"], [":scheme", "http"], [":path", ""]]].each do |fields|
      assert_raises(Malformed, fields.inspect) { @builder.build(fields) }
    end
    assert_raises(Heron::HTTP2::EnvBuilder::InvalidTarget) { @builder.build([[":method", "GET"], [":scheme", "http"], [":path", "/\xC0\xAF".b]]) }
  end
end
