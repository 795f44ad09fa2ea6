# frozen_string_literal: true

require "test_helper"
require "heron/profiler"
require "async/barrier"
require "support/cpu_burn"

class FiberAccountingTest < Minitest::Test
  include CpuBurn

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
    assert_operator busy.reactor_ms, :>=, 45.0
    assert_operator idle.reactor_ms, :<, 20.0
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

  # A profile's own fiber enters the table only when it first switches away: before that it
  # is found all the same, and after a round trip through a fiber that works for nobody (whose
  # allocations it is not charged) it is found and charged again.
  def test_the_own_fiber_is_found_before_and_after_its_first_switch
    profile = @accounting.open(new_profile)
    assert_same profile, @accounting.profile_for(Fiber.current)
    other = Fiber.new { [@accounting.current, 100_000.times { Object.new }] }
    assert_nil other.resume.first
    assert_same profile, @accounting.current
    assert_same profile, @accounting.profile_for(Fiber.current)
    50_000.times { Object.new }
    @accounting.checkpoint
    assert_operator profile.allocations, :>=, 50_000
    assert_operator profile.allocations, :<, 100_000
  ensure
    @accounting.close(profile)
    assert_nil @accounting.profile_for(Fiber.current)
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

require_relative "profiled_server"

# Two requests in flight at once on the real server, interleaving under the fiber scheduler.
class FiberAccountingServerTest < Minitest::Test
  include ProfiledServer
  include CpuBurn

  def app
    lambda do |env|
      case env["PATH_INFO"]
      when "/alloc" then 10.times { 100_000.times { Object.new }; sleep 0.01 }
      when "/burn" then 20.times { burn_cpu(10); sleep 0.001 }
      else 20.times { sleep 0.01 }
      end
      [200, { "content-type" => "text/plain" }, ["done"]]
    end
  end

  def test_allocations_are_charged_to_the_request_that_made_them
    with_profiled_server(app) do |port|
      busy, idle = concurrent_records(port, "/alloc", "/idle")
      assert overlapping?(busy, idle), "the two requests did not run at the same time"
      assert_operator busy[:allocations], :>=, 1_000_000
      assert_operator idle[:allocations], :<, 10_000
    end
  end

  # The primary figure, on every profiled request: how long its fibers held the reactor.
  def test_reactor_time_is_charged_to_the_request_that_held_it
    with_profiled_server(app, profile_cpu_sample: 1000) do |port|
      http_get(port, "/sleep") # the first measured request is CPU-sampled: the two below are not
      busy, idle = concurrent_records(port, "/burn", "/sleep")
      assert overlapping?(busy, idle), "the two requests did not run at the same time"
      assert_operator busy[:reactor_ms], :>=, 195.0
      assert_operator idle[:reactor_ms], :<, 25.0
      assert_operator idle[:total_ms], :>=, 200.0
      assert_equal [nil, nil], [busy[:cpu_ms], idle[:cpu_ms]]
    end
  end

  def test_cpu_time_is_charged_to_the_request_that_used_it
    with_profiled_server(app, profile_cpu_sample: 1) do |port|
      busy, idle = concurrent_records(port, "/burn", "/sleep")
      assert overlapping?(busy, idle), "the two requests did not run at the same time"
      assert_operator busy[:cpu_ms], :>=, 195.0
      assert_operator idle[:cpu_ms], :<, 25.0
      assert_operator idle[:total_ms], :>=, 200.0
    end
  end

  def test_tasks_a_request_starts_are_charged_to_it
    barrier_app = lambda do |_env|
      barrier = Async::Barrier.new
      4.times { barrier.async { 5.times { 50_000.times { Object.new }; sleep 0.005 } } }
      barrier.wait
      [200, { "content-type" => "text/plain" }, ["ok"]]
    end
    with_profiled_server(->(env) { env["PATH_INFO"] == "/fan" ? barrier_app.call(env) : app.call(env) }) do |port|
      fan, idle = concurrent_records(port, "/fan", "/idle")
      assert overlapping?(fan, idle)
      assert_operator fan[:allocations], :>=, 1_000_000
      assert_operator idle[:allocations], :<, 10_000
    end
  end
end
