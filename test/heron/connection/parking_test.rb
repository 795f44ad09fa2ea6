# frozen_string_literal: true

require "test_helper"

# Connections that wait without a fiber (issue 12, point 8; Server::ParkingLot): idle keep-alive
# connections park after keepalive_park_after, new ones until their first bytes come, and a
# request whose Content-Length body is still arriving parks before the app is called. Each test
# first sees the connection parked (Server#parked_count), then what the client sees.
class ParkingTest < Minitest::Test
  ECHO = lambda do |env|
    body = "#{env['REQUEST_METHOD']} #{env['PATH_INFO']} #{env['rack.input'].read}"
    [200, { "content-type" => "text/plain", "content-length" => body.bytesize.to_s }, [body]]
  end
  PARK_SOON = { keepalive_park_after: 0.01 }.freeze

  def setup
    skip "no epoll here" unless Heron::Connection::IdleSet.supported?
  end

  def test_a_parked_connection_is_served_when_its_next_request_arrives
    with_server(ECHO, **PARK_SOON) do |port, server|
      socket = parked_connection(port, server)
      socket.write("GET /second HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_equal [200, "GET /second "], read_response(socket).values_at(0, 2)
      eventually { server.parked_count == 1 }
      socket.write("GET /third HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_equal [200, "GET /third "], read_response(socket).values_at(0, 2), "parks and wakes again"
      assert_equal 1, server.connection_count
    end
  end

  def test_a_pipelined_pair_wakes_a_parked_connection
    with_server(ECHO, **PARK_SOON) do |port, server|
      socket = parked_connection(port, server)
      socket.write("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi" \
                   "GET /b HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_equal ["POST /a hi", "GET /b "], 2.times.map { read_response(socket)[2] }
    end
  end

  def test_a_request_that_arrives_in_pieces_after_parking
    with_server(ECHO, **PARK_SOON) do |port, server|
      socket = parked_connection(port, server)
      "GET /pieces HTTP/1.1\r\nHost: x\r\n\r\n".each_char.each_slice(7) do |piece|
        socket.write(piece.join)
        sleep 0.02
      end
      assert_equal [200, "GET /pieces "], read_response(socket).values_at(0, 2)
    end
  end

  def test_a_new_connection_parks_until_its_first_request
    with_server(ECHO) do |port, server|
      socket = connect(port)
      eventually { server.parked_count == 1 }
      socket.write("GET /first HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_equal [200, "GET /first "], read_response(socket).values_at(0, 2)
    end
  end

  def test_keepalive_timeout_closes_a_parked_connection
    with_server(ECHO, keepalive_timeout: 0.5, **PARK_SOON) do |port, server|
      socket = parked_connection(port, server)
      assert closed_by_server?(socket, timeout: 3)
      eventually { server.connection_count.zero? }
    end
  end

  def test_first_byte_timeout_closes_a_silent_parked_connection
    with_server(ECHO, first_byte_timeout: 0.3) do |port, server|
      socket = connect(port)
      eventually { server.parked_count == 1 }
      assert closed_by_server?(socket, timeout: 3)
    end
  end

  # The stop a TERM starts (the same self-pipe byte): parked connections close at once, the
  # request in flight is answered.
  def test_a_graceful_stop_closes_parked_connections_and_finishes_the_request_in_flight
    started = Queue.new
    release = Queue.new
    app = lambda do |env|
      (started << true) && release.pop if env["PATH_INFO"] == "/slow"
      ECHO.call(env)
    end
    server = start_server(app, shutdown_timeout: 10, **PARK_SOON)
    port = server.bound_ports.first
    parked = parked_connection(port, server)
    busy = connect(port)
    busy.write("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
    started.pop
    server.stop(graceful: true)
    assert closed_by_server?(parked, timeout: 2), "the parked connection is closed at once"
    release << true
    status, headers, body = read_response(busy)
    assert_equal [200, "close", "GET /slow "], [status, headers["connection"], body]
    assert @server_thread.join(10)
  ensure
    release&.close
    [parked, busy].each { |socket| socket&.close }
    stop_server(server) if server && @server_thread&.alive?
  end

  def test_the_connection_cap_evicts_a_parked_idle_connection_first
    with_server(ECHO, max_connections: 2, **PARK_SOON) do |port, server|
      first = parked_connection(port, server)
      second = parked_connection(port, server, parked: 2)
      third = connect(port)
      third.write("GET /third HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_equal [200, "GET /third "], read_response(third).values_at(0, 2)
      assert closed_by_server?(first, timeout: 2), "the longest-open idle connection made room"
      second.write("GET /second HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_equal 200, read_response(second)[0]
    end
  end

  def test_a_slow_body_reaches_the_app_only_once_it_has_arrived
    calls = Queue.new
    app = ->(env) { (calls << env["PATH_INFO"]) && ECHO.call(env) }
    with_server(app) do |port, server|
      socket = connect(port)
      socket.write("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhello")
      eventually { server.parked_count == 1 }
      assert calls.empty?, "the app is not called while the body is arriving"
      socket.write("world")
      assert_equal [200, "POST /upload helloworld"], read_response(socket).values_at(0, 2)
      assert_equal ["/upload"], [calls.pop]
    end
  end

  def test_a_body_that_stops_arriving_gets_408_at_body_timeout_without_the_app
    calls = Queue.new
    app = ->(env) { (calls << env["PATH_INFO"]) && ECHO.call(env) }
    with_server(app, body_timeout: 0.5) do |port, server|
      socket = connect(port)
      socket.write("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n#{'x' * 100}")
      eventually { server.parked_count == 1 }
      response = socket.read
      assert_match(/\AHTTP\/1.1 408 /, response)
      assert calls.empty?, "the app was never called"
    end
  end

  def test_a_body_slower_than_min_body_rate_gets_408_without_the_app
    calls = Queue.new
    app = ->(env) { (calls << env["PATH_INFO"]) && ECHO.call(env) }
    with_server(app, min_body_rate: 1000, body_rate_grace: 0.3) do |port, server|
      socket = connect(port)
      socket.write("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nxx")
      eventually { server.parked_count == 1 }
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      response = socket.read
      assert_match(/\AHTTP\/1.1 408 /, response)
      assert_operator Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, :<, 5, "well before body_timeout (30 s)"
      assert calls.empty?
    end
  end

  def test_a_client_that_closes_before_its_body_is_complete_never_reaches_the_app
    calls = Queue.new
    app = ->(env) { (calls << env["PATH_INFO"]) && ECHO.call(env) }
    with_server(app) do |port, server|
      socket = connect(port)
      socket.write("POST /gone HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n#{'x' * 10}")
      eventually { server.parked_count == 1 }
      socket.close
      eventually { server.parked_count.zero? }
      socket = connect(port) # the server goes on: a second request is served, and only it
      socket.write("GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_equal [200, "GET /after "], read_response(socket).values_at(0, 2)
      assert_equal ["/after"], [calls.pop], "the unfinished upload was not passed to the app"
      assert calls.empty?
    end
  end

  # Issue 20, point 3: past Server::Parking::HOT_WAITS connections waiting in their fiber, a
  # kept-alive connection parks at once, unless its client is quick (its last request came
  # within keepalive_park_after): such a client is busy, and parking it cost a park and a
  # wake-up per request at 256 wrk connections. Idle ones still park after keepalive_park_after.
  def test_busy_connections_past_the_hot_wait_cap_wait_in_their_fiber
    count = Heron::Server::Parking::HOT_WAITS + 16
    # "Quick" is within 5 s: a loaded machine can take longer than a shorter keepalive_park_after
    # between two rounds, and its idle connections would then park too.
    with_server(ECHO, keepalive_park_after: 5) do |port, server|
      sockets = Array.new(count) { connect(port) }
      parked = Array.new(3) do |round|
        sockets.each { |socket| socket.write("GET /#{round} HTTP/1.1\r\nHost: x\r\n\r\n") }
        sockets.each { |socket| assert_equal [200, "GET /#{round} "], read_response(socket).values_at(0, 2) }
        eventually { server.parked_count == 16 } if round.zero? # parking is under way once 16 have
        sleep 0.15 # all are waiting for their next request now, in their fiber or parked
        server.parked_count
      end
      assert_equal [16, 0, 0], parked, "after their first request 16 park at once; once quick, none"
      eventually { server.parked_count == count } # quick or not, an idle connection parks
    ensure
      sockets&.each(&:close)
    end
  end

  private

  # A connection that got one response and is now parked (`parked` connections in all).
  def parked_connection(port, server, parked: 1)
    socket = connect(port)
    socket.write("GET /first HTTP/1.1\r\nHost: x\r\n\r\n")
    assert_equal [200, "GET /first "], read_response(socket).values_at(0, 2)
    eventually { server.parked_count == parked }
    socket
  end
end
