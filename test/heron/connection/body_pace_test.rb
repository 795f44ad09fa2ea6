# frozen_string_literal: true

require "test_helper"
require "net/http"

# Slow clients cannot lock the server out (issue 12, point 2): a request body has to keep
# min_body_rate once body_rate_grace is used up, and at the connection cap an idle keep-alive
# connection, else the slowest client, is closed to make room for a client that is waiting.
class BodyPaceTest < Minitest::Test
  READER = lambda do |env|
    body = env["rack.input"].read
    [200, { "content-type" => "text/plain" }, ["read #{body.bytesize}"]]
  end
  HELLO = ->(_env) { [200, { "content-type" => "text/plain" }, ["hello"]] }
  GRACE = 2.0
  RATE = 100 # bytes/s

  # The normal request is answered at once (Server::Eviction): the slowest body, the oldest of
  # the three dripping ones, is closed to make room; the other two are cut with 408 at the rate's
  # deadline, and the steady one (started last, and faster: never the slowest) completes.
  def test_slow_bodies_filling_the_cap_are_cut_at_the_deadline_and_a_normal_request_is_answered
    with_server(READER, max_connections: 4, min_body_rate: RATE, body_rate_grace: GRACE, body_timeout: 30) do |port, server|
      slow = Array.new(3) { Thread.new { trickle(port, pause: 0.25, bytes: 1, length: 1000) } }
      eventually { server.connection_count == 3 }
      steady = Thread.new { trickle(port, pause: 0.1, bytes: 40, length: 1600) } # ~400 bytes/s for 4 s
      eventually { server.connection_count == 4 }
      response = Net::HTTP.start("127.0.0.1", port, open_timeout: 5, read_timeout: 10) { |http| http.get("/") }
      assert_equal ["200", "read 0"], [response.code, response.body]
      cut, closed = slow.map(&:value).partition { |status, _| status == 408 }
      assert_equal [1, 2], [closed.size, cut.size], "one slow body closed for room, two cut: #{slow.map(&:value)}"
      cut.each do |_, elapsed|
        assert_operator elapsed, :>=, GRACE, "not cut before the grace period"
        assert_operator elapsed, :<, GRACE + 5, "cut near grace + received / rate"
      end
      status, elapsed, body = steady.value
      assert_equal [200, "read 1600"], [status, body], "a body that keeps the rate is not cut"
      assert_operator elapsed, :>, GRACE + 1, "it took longer than the grace alone allows"
    end
  end

  def test_at_the_cap_an_idle_keepalive_connection_makes_room_for_a_waiting_client
    with_server(HELLO, max_connections: 2, keepalive_timeout: 60) do |port|
      idle = Array.new(2) do
        socket = connect(port)
        socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert_equal 200, read_response(socket)[0]
        socket
      end
      response = Net::HTTP.start("127.0.0.1", port, open_timeout: 5, read_timeout: 10) { |http| http.get("/") }
      assert_equal "200", response.code
      assert idle.any? { |socket| closed_by_server?(socket, timeout: 1) }, "an idle connection was closed"
    ensure
      idle&.each(&:close)
    end
  end

  private

  # Sends a POST head, then the body `bytes` at a time every `pause` seconds, until the server answers.
  # @return [Array(Integer, Float, String)] status, seconds from the end of the head, response body.
  def trickle(port, pause:, bytes:, length:)
    socket = connect(port)
    socket.write("POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: #{length}\r\n\r\n")
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    sent = 0
    until socket.wait_readable(pause) || sent >= length
      socket.write("x" * bytes)
      sent += bytes
    end
    status, _, body = read_response(socket)
    [status, Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, body]
  rescue Errno::EPIPE, Errno::ECONNRESET
    [0, Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, ""]
  ensure
    socket&.close
  end
end
