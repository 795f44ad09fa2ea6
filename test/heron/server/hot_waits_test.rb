# frozen_string_literal: true

require "test_helper"

# Server::Parking::HotWaits over real sockets under the real fiber scheduler: each wait ends
# when its socket is readable or its own deadline passes, and a fiber that left a wait is never
# woken out of a later one by the earlier wait's deadline.
class HotWaitsTest < Minitest::Test
  TIMEOUT = 0.2

  def teardown = @pairs.to_a.flatten.each(&:close) # closing a closed socket does nothing

  def test_a_wait_with_nothing_coming_ends_false_at_its_deadline
    ours, = pair
    result, waited = in_reactor { |waits| timed { waits.readable?(ours) } }
    refute result
    assert_operator waited, :>=, TIMEOUT
  end

  def test_a_wait_ends_true_when_its_socket_becomes_readable
    ours, theirs = pair
    result = in_reactor do |waits|
      Async { theirs.io.write("x") }
      waits.readable?(ours)
    end
    assert result
  end

  # Two waits begun apart: each lasts its own time, the later one is not cut at the earlier's
  # deadline.
  def test_each_wait_lasts_its_own_time
    first, = pair
    second, = pair
    waited = in_reactor do |waits|
      early = Async { timed { waits.readable?(first) } }
      sleep TIMEOUT / 2
      late = Async { timed { waits.readable?(second) } }
      [early.wait, late.wait]
    end
    waited.each do |result, seconds|
      refute result
      assert_operator seconds, :>=, TIMEOUT
    end
  end

  # A fiber whose socket became readable goes on to wait for something else (here another
  # socket, with no timeout); the first wait's deadline passes meanwhile and must not end the
  # later wait (a stray resume would make its wait_readable return nil).
  def test_a_fiber_that_left_its_wait_is_not_woken_at_that_waits_deadline
    ours, theirs = pair
    other, other_peer = pair
    result = in_reactor do |waits|
      waiter = Async do
        waits.readable?(ours) or raise "the first wait should have seen its bytes"
        other.io.wait_readable
      end
      theirs.io.write("x")
      sleep TIMEOUT * 2 # the first wait's deadline passes while the fiber waits on `other`
      waits_left = waits.size
      other_peer.io.write("y")
      [waiter.wait, waits_left]
    end
    assert_equal other.io, result[0], "the later wait ended only when its own socket was readable"
    assert_equal 0, result[1]
  end

  private

  def in_reactor
    Sync do |task|
      waits = Heron::Server::Parking::HotWaits.new(task, TIMEOUT)
      yield waits
    end
  end

  def timed
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    [yield, Process.clock_gettime(Process::CLOCK_MONOTONIC) - started]
  end

  def pair
    ours, theirs = UNIXSocket.pair
    (@pairs ||= []) << [ours, theirs]
    [Heron::Connection::BufferedSocket.new(ours), Heron::Connection::BufferedSocket.new(theirs)]
  end
end
