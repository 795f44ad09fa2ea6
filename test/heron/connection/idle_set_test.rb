# frozen_string_literal: true

require "test_helper"
require "socket"

# Heron::Connection::IdleSet (ext/heron/heron_connection_idle_set.c): an epoll set that reports
# each socket once, when it is readable or hung up, without waiting.
class IdleSetTest < Minitest::Test
  def setup
    skip "no epoll here" unless Heron::Connection::IdleSet.supported?
    @set = Heron::Connection::IdleSet.new
    @pairs = []
  end

  def teardown
    @set&.close
    @pairs.flatten.each { |socket| socket.close unless socket.closed? }
  end

  def test_reports_a_socket_once_when_it_becomes_readable
    ours, theirs = pair
    @set.add(ours.fileno)
    assert_equal [], @set.ready, "nothing to read yet"
    theirs.write("x")
    assert_equal [ours.fileno], @set.ready
    assert_equal [], @set.ready, "one-shot: not reported again until added again"
    @set.add(ours.fileno)
    assert_equal [ours.fileno], @set.ready, "added again while still readable"
  end

  def test_reports_a_hang_up
    ours, theirs = pair
    @set.add(ours.fileno)
    theirs.close
    assert_equal [ours.fileno], @set.ready
  end

  def test_deleted_sockets_are_not_reported
    ours, theirs = pair
    @set.add(ours.fileno)
    @set.delete(ours.fileno)
    @set.delete(ours.fileno) # not in the set: ignored
    theirs.write("x")
    assert_equal [], @set.ready
  end

  def test_reports_many_sockets_in_batches
    sockets = Array.new(300) { pair }
    sockets.each { |ours, _| @set.add(ours.fileno) }
    sockets.each { |_, theirs| theirs.write("x") }
    first = @set.ready
    assert_equal 256, first.size, "at most 256 per call"
    assert_equal sockets.map { |ours, _| ours.fileno }.sort, (first + @set.ready).sort
  end

  # The point of the class: one fiber waits on the set's descriptor through the scheduler.
  def test_its_descriptor_is_readable_through_the_fiber_scheduler
    ours, theirs = pair
    @set.add(ours.fileno)
    io = IO.for_fd(@set.fileno, autoclose: false)
    ready = Sync do |task|
      waiter = task.async { io.wait_readable(5) && @set.ready }
      task.async { theirs.write("x") }
      waiter.wait
    end
    assert_equal [ours.fileno], ready
  ensure
    io&.close
  end

  def test_a_closed_set_raises
    @set.close
    @set.close # twice is fine
    assert_raises(IOError) { @set.ready }
    assert_raises(IOError) { @set.fileno }
  end

  private

  def pair
    UNIXSocket.pair.tap { |sockets| @pairs << sockets }
  end
end
