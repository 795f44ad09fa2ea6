# frozen_string_literal: true

require "test_helper"
require "heron/profiler"
require "async/barrier"

class AsyncTaskHookTest < Minitest::Test
  def setup
    assert Heron::Profiler::AsyncTaskHook.install
    @accounting = Heron::Profiler.accounting
  end

  def test_child_and_grandchild_tasks_are_charged_to_the_request
    profile = Sync do
      profile = @accounting.open(Heron::Profiler::RequestProfile.new("GET", "/", ""))
      barrier = Async::Barrier.new
      3.times { barrier.async { Async { 100_000.times { Object.new } }.wait; sleep 0.001 } }
      barrier.wait
      @accounting.checkpoint
      assert_operator profile.fibers.size, :>=, 7
      @accounting.close(profile)
      profile
    end
    assert_operator profile.allocations, :>=, 300_000
    assert_empty profile.fibers
  end

  def test_tasks_outside_a_request_are_not_attached
    Sync do
      assert_nil Async { @accounting.current }.wait
    end
  end

  def test_a_task_started_after_the_request_finished_is_not_attached
    Sync do |task|
      profile = @accounting.open(Heron::Profiler::RequestProfile.new("GET", "/", ""))
      profile.finished
      assert_nil task.async { @accounting.current }.wait
      @accounting.close(profile)
    end
  end

  # Only async's public API: a task class with public #async and #fiber (and no private
  # #schedule, which an earlier version of the hook wrapped) is enough.
  def test_install_needs_only_public_task_methods
    task_class = Class.new do
      def async(*) = nil
      def fiber = nil
    end
    assert Heron::Profiler::AsyncTaskHook.install(task_class)
    refute task_class.private_method_defined?(:schedule)
  end

  def test_install_is_idempotent_and_refuses_an_unknown_task_class
    assert Heron::Profiler::AsyncTaskHook.install
    refute Heron::Profiler::AsyncTaskHook.install(Class.new)
  end
end
