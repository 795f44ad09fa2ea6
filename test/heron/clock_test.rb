# frozen_string_literal: true

require "test_helper"

# Heron::Clock (ext/heron/heron_clock.c): the monotonic clock every deadline and duration reads.
class HeronClockTest < Minitest::Test
  # Includes the module, as the server's classes do.
  class Timed
    include Heron::Clock

    def read = now
  end

  def test_now_reads_the_monotonic_clock_in_seconds
    before = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    now = Heron::Clock.now
    after = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    assert_instance_of Float, now
    assert_operator before, :<=, now
    assert_operator now, :<=, after
  end

  def test_it_never_goes_back
    readings = Array.new(1000) { Heron::Clock.now }
    assert_equal readings.sort, readings
  end

  def test_an_including_class_gets_a_private_now
    timed = Timed.new
    refute_respond_to timed, :now
    before = Heron::Clock.now
    assert_operator timed.read, :>=, before
  end
end
