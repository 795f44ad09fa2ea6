# frozen_string_literal: true

require "test_helper"
require "heron/profiler/cpu_clock"

# Heron::Profiler::CPUClock against the kernel's own thread clock.
class HeronProfilerCPUClockTest < Minitest::Test
  CPUClock = Heron::Profiler::CPUClock

  def kernel_ms = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :float_millisecond)

  def spin(ms)
    stop = kernel_ms + ms
    nil while kernel_ms < stop
  end

  def test_follows_the_kernel_clock_while_running
    before_kernel, before = kernel_ms, CPUClock.now
    spin(20)
    assert_in_delta kernel_ms - before_kernel, CPUClock.now - before, 2.0
  end

  def test_reads_never_go_back
    readings = Array.new(10_000) { CPUClock.now }
    assert_equal readings.sort, readings
  end

  def test_a_sleep_is_not_cpu_time
    before = CPUClock.now
    sleep 0.05
    assert_operator CPUClock.now - before, :<, 10
  end

  def test_each_thread_reads_its_own_clock
    spin(30)
    other = Thread.new { CPUClock.now }.value
    assert_operator other, :<, CPUClock.now - 20
  end
end
