# frozen_string_literal: true

require "test_helper"
require "open3"

# Per-thread allocation counts, in a process of their own (the hook stays on once enabled): two
# threads allocating at the same time each count only their own objects, and Profiler.wrap turns
# the counting on for a server with a thread per request (built outside a fiber scheduler, no
# Heron configuration) but not inside a scheduler (Falcon) or for Heron.
class ProfilerThreadAllocationsTest < Minitest::Test
  LIB = File.expand_path("../../../lib", __dir__)

  def ruby(script)
    out, status = Open3.capture2e(RbConfig.ruby, "-I", LIB, "-e", script)
    assert status.success?, out
    out
  end

  def test_each_thread_counts_its_own_allocations
    out = ruby(<<~'RUBY')
      require "heron/profiler"
      Heron::Profiler::ThreadAllocations.enable
      gate = Thread::Queue.new
      counts = [100_000, 1_000].map do |n|
        Thread.new do
          gate.pop
          before = Heron::Profiler::ThreadAllocations.count
          n.times { |i| "s#{i}" }
          Heron::Profiler::ThreadAllocations.count - before
        end
      end
      2.times { gate << true }
      print counts.map(&:value).join(" ")
    RUBY
    big, small = out.split.map { |count| Integer(count) }
    assert_operator big, :>=, 100_000
    assert_operator small, :>=, 1_000
    assert_operator small, :<, 10_000, "the small thread's count holds none of the other's"
  end

  def test_wrap_enables_it_only_for_a_thread_per_request_server
    out = ruby(<<~'RUBY')
      require "heron/profiler"
      require "async"
      app = ->(_env) { [200, {}, []] }
      Sync { Heron::Profiler.wrap(app, logger: Logger.new(nil)) } # built inside a scheduler: Falcon
      print Heron::Profiler::ThreadAllocations.enabled?, " "
      Heron::Profiler.wrap(app, logger: Logger.new(nil)) # outside one: Puma
      print Heron::Profiler::ThreadAllocations.enabled?
    RUBY
    assert_equal "false true", out
  end
end
