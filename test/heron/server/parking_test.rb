# frozen_string_literal: true

require "test_helper"

# Server::Parking's interface for a connection its app took over (an upgraded one): parked with
# Spot#park_until on a real reactor's parking, over a real socket pair, it is woken in a worker
# when its client writes, expired when its deadline passes, and told when it is closed from outside.
class ParkingTest < Minitest::Test
  # What an upgraded connection answers when its spot wakes it: it records the event and, when
  # readable, parks again until `again` (if given).
  class Upgraded
    attr_accessor :spot, :again
    attr_reader :events

    def initialize
      @events = []
    end

    def readable
      @events << [:readable, spot.io.read_nonblock(16, exception: false)]
      again ? spot.park_until(again) : nil
    end

    def expired
      @events << [:expired]
      nil
    end

    def abandoned
      @events << [:abandoned]
      spot.io.close
    end
  end

  def test_an_upgraded_connection_waits_parked_until_its_client_writes_then_until_its_deadline
    owner = Upgraded.new
    ours, theirs = pair
    events = on_parking do |parking|
      owner.spot = parking.spot(owner, Heron::Connection::BufferedSocket.new(ours, +""), now)
      owner.again = now + 0.2
      assert_equal :parked, owner.spot.park_until(now + 30)
      assert_equal 1, parking.size
      theirs.write("ping")
      wait_for { owner.events.size == 2 } # woken, parked again, then expired
      parking.size
    end
    assert_equal 0, events
    assert_equal [[:readable, "ping"], [:expired]], owner.events
  end

  def test_an_upgraded_connection_is_closed_by_an_eviction_not_by_a_graceful_stop
    owner = Upgraded.new
    ours, = pair
    on_parking do |parking|
      owner.spot = parking.spot(owner, Heron::Connection::BufferedSocket.new(ours, +""), now)
      owner.spot.park_until(now + 30)
      refute owner.spot.close_if_idle(true), "a graceful stop leaves it to its owner"
      assert owner.spot.evict
      assert_equal 0, parking.size
    end
    assert ours.closed?
    assert_equal [[:abandoned]], owner.events, "closed from outside, its owner is told"
  end

  private

  def on_parking
    skip "no epoll here" unless Heron::Server::ParkingLot.supported?
    config = Heron::Configuration.new(log_io: StringIO.new, error_io: StringIO.new)
    reactor = Heron::Server::ReactorThread.new(Heron::Server.new(->(_env) {}, config, listeners: []), 10)
    Sync do |task|
      reactor.attach(task)
      reactor.parking.start(task, Heron::Server::ConnectionWorkers.new(task))
      yield reactor.parking
    ensure
      reactor.parking.close
      task.children.each(&:stop)
      @pairs&.flatten&.each { |socket| socket.close unless socket.closed? }
    end
  end

  def wait_for
    deadline = now + 10
    sleep 0.01 until yield || now > deadline
  end

  def pair
    UNIXSocket.pair.tap { |sockets| (@pairs ||= []) << sockets }
  end

  def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
end
