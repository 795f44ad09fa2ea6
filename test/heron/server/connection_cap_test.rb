# frozen_string_literal: true

require "test_helper"

# At max_connections, a new client is served at once (issue 28, point 6; Server::Eviction): the
# server closes the slowest connection still sending its request (a head or a body dripped a
# byte at a time, or nothing at all) instead of making the newcomer wait until one of them times
# out (header_timeout / body_timeout: 8 s and more before). Real server, real sockets.
class ConnectionCapTest < Minitest::Test
  CAP = 12
  # Far below the 10 s a dripper held its slot for before (header_timeout, first_byte_timeout),
  # and far above the milliseconds it takes now, for a loaded machine.
  BOUND = 3.0
  OK = ->(_env) { [200, { "content-type" => "text/plain" }, ["ok"]] }
  SERVERS = 60
  BODY_HEAD = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\na"

  def setup
    @sockets = []
  end

  def teardown
    @drip&.kill
    @sockets.each { |socket| socket.close unless socket.closed? }
  end

  def test_a_new_client_is_served_while_the_cap_is_full_of_drippers
    with_server(OK, max_connections: CAP) do |port, server|
      fill_with_drippers(port)
      eventually { server.connection_count == CAP }
      3.times do |round|
        elapsed, status = timed_get(port)
        assert_equal 200, status, "new client #{round + 1}"
        assert_operator elapsed, :<, BOUND, "new client #{round + 1} answered after #{elapsed.round(2)} s"
        refill(port, server) # silent clients take the freed slots, so the next one needs room too
      end
      assert_operator @sockets.count { |socket| closed_by_server?(socket) }, :>=, 3, "drippers were closed to make room"
    end
  end

  # The drippers' bytes and the new client come together, so in the loop's turn that looks for
  # room the drippers were just handed to workers by the parking lot (their bytes came), not yet
  # parked again. Before, evicting such a connection closed nothing, and the accept loop waited
  # for some other connection to close, idle, until a dripper was cut (here 60 s: the
  # 3-7 s outliers of bench/results/connection_cap.md, where cuts come every few seconds). The
  # race is not won every time (one server in ten to twenty here), so it is run on 60 servers.
  def test_a_new_client_is_served_when_the_drippers_were_just_woken
    SERVERS.times do |attempt| # a fresh server each time: the race is likeliest on a new one
      with_server(OK, max_connections: CAP, body_rate_grace: 60, body_timeout: 60) do |port, server|
        drippers = Array.new(CAP) { body_dripper(port) }
        eventually { server.parked_count == CAP }
        drippers.each { |socket| socket.write("a") }
        elapsed, status = timed_get(port)
        assert_equal 200, status, "new client on server #{attempt + 1}"
        assert_operator elapsed, :<, BOUND, "new client on server #{attempt + 1} answered after #{elapsed.round(2)} s"
      end
      @sockets.each(&:close).clear
    end
  end

  # An app running is never evicted: with every slot taken by requests in the app, a new client
  # waits for one of them to finish, and each of them completes.
  def test_requests_in_the_app_are_not_evicted
    release = Queue.new
    app = lambda do |env|
      release.pop if env["PATH_INFO"] == "/hold"
      OK.call(env)
    end
    with_server(app, max_connections: 2) do |port, server|
      holders = Array.new(2) { connect(port).tap { |s| s.write("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n") } }
      eventually { server.in_flight == 2 }
      waiting = connect(port)
      waiting.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
      refute waiting.wait_readable(0.3), "not served while both slots are in the app"
      2.times { release << true }
      assert_equal [200, 200], holders.map { |socket| read_response(socket)[0] }
      holders.each(&:close)
      assert_equal 200, read_response(waiting)[0]
      waiting.close
    end
  end

  private

  # A third of the slots: clients that connected and sent nothing; a third dripping a head; a
  # third whose head came whole and whose body (Content-Length) drips. One byte per dripper every
  # 0.2 s, so none is idle and none times out.
  def fill_with_drippers(port)
    kinds = [nil, "GET / HTTP/1.1\r\nHost: x\r\n", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"]
    drippers = Array.new(CAP) do |index|
      socket = connect(port)
      @sockets << socket
      head = kinds[index % 3]
      socket.write(head) if head
      [socket, head && (head.start_with?("GET") ? "X-Drip: y" : "a")]
    end
    @drip = Thread.new { loop { drip(drippers) } }
  end

  def body_dripper(port)
    connect(port).tap do |socket|
      socket.write(BODY_HEAD)
      @sockets << socket
    end
  end

  def refill(port, server)
    eventually { server.connection_count < CAP } # the new client's connection has closed
    eventually do
      (CAP - server.connection_count).times { @sockets << connect(port) }
      server.connection_count == CAP
    end
  end

  def drip(drippers)
    drippers.each do |socket, byte|
      socket.write_nonblock(byte, exception: false) if byte && !socket.closed?
    rescue SystemCallError, IOError
      nil
    end
    sleep 0.2
  end

  def timed_get(port)
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    socket = connect(port)
    socket.write("GET /new HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    return [Float::INFINITY, nil] unless socket.wait_readable(BOUND + 10)
    status = read_response(socket)&.first
    [Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, status]
  ensure
    socket&.close
  end

  def closed_by_server?(socket)
    socket.read_nonblock(1, exception: false).nil?
  rescue SystemCallError
    true
  end
end
