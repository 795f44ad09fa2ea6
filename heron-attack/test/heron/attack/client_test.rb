# frozen_string_literal: true

require "test_helper"
require "heron/attack"
require "objspace"
require_relative "support/test_server"

class ClientTest < Minitest::Test
  Client = Heron::Attack::Client
  Target = Heron::Attack::Target

  def exchange(client, target, times = 1)
    Sync { Array.new(times) { client.call(target) } }
  ensure
    client.close
  end

  def test_keepalive_reuses_one_connection
    server = TestServer.new.start
    responses = exchange(Client.new(timeout: 5), Target.new("GET", "http://127.0.0.1:#{server.port}/"), 3)
    assert_equal [[200, 5, true]] * 3, responses.map(&:to_a)
    assert_equal 1, server.instance_variable_get(:@threads).size
  ensure
    server&.stop
  end

  def test_no_keepalive_opens_a_connection_per_request
    server = TestServer.new.start
    target = Target.new("GET", "http://127.0.0.1:#{server.port}/", keepalive: false)
    exchange(Client.new(timeout: 5, keepalive: false), target, 3)
    assert_equal 3, server.instance_variable_get(:@threads).size
  ensure
    server&.stop
  end

  def test_chunked_and_close_delimited_servers
    %i[chunked close].each do |framing|
      server = TestServer.new(framing: framing).start
      responses = exchange(Client.new(timeout: 5), Target.new("GET", "http://127.0.0.1:#{server.port}/"), 2)
      assert_equal [200, 200], responses.map(&:status)
      assert_equal [5, 5], responses.map(&:bytes)
      server.stop
    end
  end

  def test_timeout
    server = TestServer.new(delay: 2).start
    error = assert_raises(Async::TimeoutError) { exchange(Client.new(timeout: 0.2), Target.new("GET", "http://127.0.0.1:#{server.port}/")) }
    assert_equal "timeout", Heron::Attack::ErrorKind.of(error)
  ensure
    server&.stop
  end

  def test_refused
    port = TCPServer.open("127.0.0.1", 0) { |s| s.addr[1] }
    error = assert_raises(Errno::ECONNREFUSED) { exchange(Client.new(timeout: 5), Target.new("GET", "http://127.0.0.1:#{port}/")) }
    assert_equal "refused", Heron::Attack::ErrorKind.of(error)
  end

  def test_retries_once_when_an_idle_connection_was_closed
    listener = TCPServer.new("127.0.0.1", 0)
    thread = Thread.new { 2.times { one_shot(listener.accept) } }
    target = Target.new("GET", "http://127.0.0.1:#{listener.addr[1]}/")
    assert_equal [200, 200], exchange(Client.new(timeout: 5), target, 2).map(&:status)
  ensure
    thread&.join(5)
    listener&.close
  end

  # Async's with_timeout put a timer per request in flight into the event loop's heap, which
  # every other timer (each sleep of the generator's schedule) then went through; the client's
  # deadlines keep none there.
  def test_requests_in_flight_put_no_timers_in_the_event_loop
    timers = while_in_flight(timeout: 30) { Fiber.scheduler.instance_variable_get(:@timers).size }
    assert_operator timers, :<, 5
  end

  # Each connection had a 64 KiB read buffer of its own (counted by Ruby's malloc limits, so
  # thousands of connections set off major collections); a client's connections share one.
  def test_connections_in_flight_share_one_read_buffer
    before = ObjectSpace.memsize_of_all(String)
    grown = while_in_flight(timeout: 5) { ObjectSpace.memsize_of_all(String) - before }
    assert_operator grown, :<, 10 * Heron::Attack::Connection::READ_SIZE
  end

  def test_resolve_prefers_ipv4
    address = Client.new(timeout: 1).resolve(Target.new("GET", "http://localhost:9/"))
    assert_predicate address, :ipv4?
    assert_equal 9, address.ip_port
  end

  def test_resolve_failure
    assert_raises(SocketError) { Client.new(timeout: 1).resolve(Target.new("GET", "http://no-such-host.invalid/")) }
  end

  private

  # Sends 40 requests at once to a server that answers each after 0.3 s, and returns what the
  # block returns 0.1 s later, while all of them are in flight.
  def while_in_flight(timeout:)
    server = TestServer.new(delay: 0.3).start
    client = Client.new(timeout: timeout)
    target = Target.new("GET", "http://127.0.0.1:#{server.port}/")
    Sync do |task|
      requests = Array.new(40) { task.async { client.call(target) } }
      sleep(0.1)
      yield.tap { requests.each(&:wait) }
    end
  ensure
    client&.close
    server&.stop
  end

  # Answers one request with keep-alive, then closes the socket as an idle timeout would.
  def one_shot(socket)
    nil until socket.gets == "\r\n"
    socket.write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    sleep 0.1
    socket.close
  end
end
