# frozen_string_literal: true

require "test_helper"
require "heron/profiler"
require "sequel"

class InstrumentationTest < Minitest::Test
  def test_hooks_sequel_and_waits_for_active_support
    instrumentation = Heron::Profiler::Sql::Instrumentation.new(Heron::Profiler.recorder)
    refute instrumentation.install
    assert instrumentation.sequel?
    refute instrumentation.active_record?
  end

  def test_subscribes_when_active_support_notifications_appears
    notifications = Minitest::Mock.new
    notifications.expect(:subscribe, nil, ["sql.active_record", Heron::Profiler::Sql::ActiveRecordSubscriber])
    with_active_support(notifications) do
      instrumentation = Heron::Profiler::Sql::Instrumentation.new(Heron::Profiler.recorder)
      refute instrumentation.install, "ActiveRecord's associations are not loaded: asked again later"
      assert instrumentation.active_record?
      assert instrumentation.associations?(:sequel)
      refute instrumentation.associations?(:active_record)
    end
    notifications.verify
  end

  private

  def with_active_support(notifications)
    Object.const_set(:ActiveSupport, Module.new)
    ActiveSupport.const_set(:Notifications, notifications)
    yield
  ensure
    Object.send(:remove_const, :ActiveSupport)
  end
end
