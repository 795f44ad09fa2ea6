# frozen_string_literal: true

require "test_helper"

# Connection::ClientWait over a real socket pair and a real Server::Parking spot (one that may not
# park: no parking lot is started), in a fiber scheduler: what it tells eviction and a graceful
# stop while the connection waits on its client.
class HeronConnectionClientWaitTest < Minitest::Test
  ClientWait = Heron::Connection::ClientWait

  # The reactor a Server::Parking reports closed connections to.
  class Reactor
    def closed(_connection) = nil
  end

  def setup
    @ours, @peer = UNIXSocket.pair
    @accepted = now
  end

  def teardown
    [@ours, @peer].each { |io| io.close unless io.closed? }
  end

  def test_the_first_request_waits_since_the_accept_and_a_fresh_connection_is_not_kept_alive
    wait = client_wait
    assert_equal [@accepted, true, false], [wait.since, wait.idle?, wait.kept_alive_idle?]
    @peer.write("G")
    Sync { assert_equal @accepted, wait.next_request(true, @socket), "the first request's wait began at the accept" }
    refute wait.idle?
  end

  def test_between_requests_the_connection_is_idle_until_its_next_request_starts
    wait = client_wait
    Sync do |task|
      waiting = task.async { wait.next_request(false, @socket) }
      task.yield until wait.since != @accepted # the wait for the next request began
      assert wait.kept_alive_idle?, "idle after a request, while nothing has come"
      began = wait.since
      assert_operator began, :>, @accepted
      @peer.write("GET")
      started = waiting.wait
      assert_operator started, :>=, began, "the request's wait began with its first byte"
      assert_equal started, wait.since
      refute wait.idle?
    end
  end

  def test_a_client_that_closes_between_requests_ends_the_wait_idle
    wait = client_wait
    @peer.close
    Sync { refute wait.next_request(false, @socket) }
    assert wait.kept_alive_idle?
  end

  def test_a_rejected_connection_is_not_idle_and_a_connection_taken_over_waits_on_nobody
    wait = client_wait
    wait.busy
    refute wait.idle?
    assert_equal @accepted, wait.since, "a rejected client may still be the slowest"
    wait = client_wait
    wait.taken_over
    assert_equal [nil, false], [wait.since, wait.idle?]
  end

  private

  def client_wait(keepalive_timeout: 5)
    config = Heron::Configuration.new(binds: ["tcp://127.0.0.1:0"], keepalive_timeout: keepalive_timeout)
    @socket = socket = Heron::Connection::BufferedSocket.new(@ours)
    spot = Heron::Server::Parking.new(config, Reactor.new).spot(nil, socket, @accepted)
    ClientWait.new(spot, @accepted)
  end

  def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
end
