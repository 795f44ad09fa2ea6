# frozen_string_literal: true

require "test_helper"
require "heron/profiler"

class FiberAccountingTest < Minitest::Test
  def setup
    @accounting = Heron::Profiler::FiberAccounting.new
  end

  def new_profile(path = "/")
    Heron::Profiler::RequestProfile.new("GET", path, "")
  end

  def measured(path)
    profile = @accounting.open(new_profile(path))
    yield
    @accounting.checkpoint
    profile
  ensure
    @accounting.close(profile)
  end

  def burn_cpu(ms)
    clock = Process::CLOCK_THREAD_CPUTIME_ID
    started = Process.clock_gettime(clock, :float_millisecond)
    nil while Process.clock_gettime(clock, :float_millisecond) - started < ms
  end

  def test_interleaved_fibers_are_charged_separately
    busy, idle = Sync do
      busy = Async { measured("/busy") { 10.times { 50_000.times { Object.new }; burn_cpu(5); sleep 0.001 } } }
      idle = Async { measured("/idle") { 20.times { sleep 0.001 } } }
      [busy.wait, idle.wait]
    end
    assert_operator busy.allocations, :>=, 500_000
    assert_operator idle.allocations, :<, 5_000
    assert_operator busy.cpu_ms, :>=, 45.0
    assert_operator idle.cpu_ms, :<, 20.0
  end

  def test_tracepoint_is_on_only_while_a_profile_is_open
    refute @accounting.tracing?
    profile = @accounting.open(new_profile)
    assert @accounting.tracing?
    assert_same profile, @accounting.current
    @accounting.close(profile)
    refute @accounting.tracing?
    assert_nil @accounting.current
  end

  def test_attach_another_fiber_and_forget_it_on_close
    profile = @accounting.open(new_profile)
    fiber = Fiber.new { @accounting.current }
    @accounting.attach(profile, fiber)
    assert_same profile, @accounting.profile_for(fiber)
    assert_same profile, fiber.resume
    @accounting.close(profile)
    assert_nil @accounting.profile_for(fiber)
  end

  def test_a_fiber_reused_by_a_newer_profile_stays_with_it
    old = @accounting.open(new_profile)
    newer = @accounting.open(new_profile)
    @accounting.close(old)
    assert_same newer, @accounting.current
    assert @accounting.tracing?
  ensure
    @accounting.close(newer)
  end
end
