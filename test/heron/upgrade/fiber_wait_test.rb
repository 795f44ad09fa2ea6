# frozen_string_literal: true

require "test_helper"

# Waiting in the fiber for a real socket: readable, the deadline, and a close begun from another
# task cutting the wait short.
class UpgradeFiberWaitTest < Minitest::Test
  def test_readable_expired_and_interrupted
    ours, theirs = UNIXSocket.pair
    wait = Heron::Upgrade::FiberWait.new(ours)
    Sync do |task|
      wait.deadline = Heron::Clock.now + 0.05
      assert_equal :expired, wait.wait
      theirs.write("x")
      wait.deadline = Heron::Clock.now + ProcessHelper::PATIENCE
      assert_equal :readable, wait.wait
      ours.read(1)
      # This task yields at once; it runs on once the wait below has begun.
      task.async do |interrupter|
        interrupter.yield
        wait.interrupt
      end
      assert_equal :interrupted, wait.wait
      wait.interrupt # nothing waits: nothing happens
    end
  ensure
    [ours, theirs].each { |io| io&.close }
  end
end
