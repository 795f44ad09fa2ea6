# frozen_string_literal: true

require "test_helper"
require "tempfile"

# HEAD, 1xx, 204 and 304 carry no body bytes whatever kind of body the app returns; the connection
# stays in step, so a second request on it is answered cleanly.
class BodilessTest < Minitest::Test
  # An `each` body that records whether it was iterated and closed.
  class EachBody
    attr_reader :iterated, :closed

    def each
      @iterated = true
      yield "stray each bytes"
    end

    def close = @closed = true
  end

  # A streaming body that would write if called.
  class CallableBody
    attr_reader :called, :closed

    def call(stream)
      @called = true
      stream.write("stray streamed bytes")
      stream.close
    end

    def close = @closed = true
  end

  # A body naming its file, like Rack::Files' iterator.
  class PathBody < EachBody
    def initialize(path) = @path = path
    def to_path = @path
  end

  CASES = {
    "HEAD 200" => ["HEAD", 200],
    "GET 103" => ["GET", 103],
    "GET 204" => ["GET", 204],
    "GET 304" => ["GET", 304],
  }.freeze

  def setup
    @file = Tempfile.new("bodiless")
    @file.write("stray file bytes")
    @file.flush
  end

  def teardown
    @file.close!
  end

  def bodies
    { "array" => -> { ["stray array bytes"] }, "each" => -> { EachBody.new },
      "callable" => -> { CallableBody.new }, "to_path" => -> { PathBody.new(@file.path) } }
  end

  # Rack::Lint is left out: it refuses a non-empty body for these statuses, and such bodies are
  # exactly what real apps (an SSE endpoint asked with `curl -I`) return.
  def test_no_body_bytes_for_any_body_kind_and_the_next_request_parses
    made = []
    app = lambda do |env|
      return [200, { "content-type" => "text/plain" }, ["next"]] if env["PATH_INFO"] == "/next"
      made << (body = bodies.fetch(env["QUERY_STRING"]).call)
      [Integer(env["PATH_INFO"][1..]), { "content-type" => "text/plain" }, body]
    end
    with_server(app, lint: false) do |port|
      CASES.each do |name, (method, status)|
        bodies.each_key { |kind| check(port, method, status, kind, "#{name} × #{kind}") }
      end
    end
    assert_equal CASES.size * bodies.size, made.size
    made.grep_v(Array).each { |body| assert body.closed, "#{body.class} closed" }
    refute made.any? { |body| body.respond_to?(:iterated) && body.iterated }, "no body iterated"
    refute made.any? { |body| body.respond_to?(:called) && body.called }, "no streaming body called"
  end

  private

  def check(port, method, status, kind, label)
    socket = connect(port)
    socket.write("#{method} /#{status}?#{kind} HTTP/1.1\r\nHost: x\r\n\r\n")
    head = read_head(socket)
    assert_match(/\AHTTP\/1.1 #{status} /, head, label)
    refute_match(/transfer-encoding/i, head, label)
    socket.write("GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
    next_status, _headers, body = Timeout.timeout(ProcessHelper::PATIENCE) { read_response(socket) }
    assert_equal [200, "next"], [next_status, body], "#{label}: the next response parses cleanly"
  ensure
    socket&.close
  end

  def read_head(socket)
    Timeout.timeout(5) do
      head = +""
      head << socket.readpartial(1) until head.end_with?("\r\n\r\n")
      head
    end
  end
end
