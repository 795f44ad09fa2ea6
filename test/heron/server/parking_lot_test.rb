# frozen_string_literal: true

require "test_helper"

# Server::ParkingLot over real sockets: a parked connection is handed back once when its socket
# is readable, expired once its deadline passes, and neither once removed.
class ParkingLotTest < Minitest::Test
  def setup
    skip "no epoll here" unless Heron::Server::ParkingLot.supported?
    @pairs = []
  end

  def teardown
    @pairs.flatten.each { |socket| socket.close unless socket.closed? }
  end

  def test_hands_back_a_connection_whose_socket_became_readable
    ours, theirs = pair
    events = in_lot do |lot, log|
      lot.park(:conn, ours, now + 10, :idle)
      assert_equal 1, lot.size
      theirs.write("x")
      sleep 0.05
      assert_equal 0, lot.size
      log
    end
    assert_equal [[:resume, :conn]], events
  end

  def test_expires_connections_at_their_deadlines_in_every_lane
    a, = pair
    b, = pair
    c, = pair
    events = in_lot do |lot, log|
      lot.park(:late, a, now + 0.3, :idle)
      lot.park(:body, b, now + 0.1, :body)
      lot.park(:fresh, c, now + 0.2, :fresh)
      sleep 0.5
      log
    end
    assert_equal [[:expire, :body], [:expire, :fresh], [:expire, :late]], events
  end

  def test_a_removed_connection_is_neither_resumed_nor_expired
    ours, theirs = pair
    events = in_lot do |lot, log|
      lot.park(:conn, ours, now + 0.1, :idle)
      assert_equal :conn, lot.remove(ours)
      assert_nil lot.remove(ours)
      theirs.write("x")
      sleep 0.2
      log
    end
    assert_empty events
  end

  def test_close_returns_what_is_still_parked
    a, = pair
    b, = pair
    Sync do |task|
      lot = Heron::Server::ParkingLot.new(task, resume: ->(_) {}, expire: ->(_) {})
      lot.park(:a, a, now + 10, :idle)
      lot.park(:b, b, now + 10, :body)
      assert_equal %i[a b], lot.close.sort
      assert_equal 0, lot.size
    end
  end

  private

  def in_lot
    log = []
    Sync do |task|
      lot = Heron::Server::ParkingLot.new(task, resume: ->(c) { log << [:resume, c] }, expire: ->(c) { log << [:expire, c] })
      yield lot, log
    ensure
      lot&.close
    end
  end

  def pair = UNIXSocket.pair.tap { |sockets| @pairs << sockets }
  def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
end
