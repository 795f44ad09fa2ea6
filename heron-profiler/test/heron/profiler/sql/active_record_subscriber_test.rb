# frozen_string_literal: true

require "test_helper"
require "heron/profiler"

# ActiveRecord is not in the bundle, so ActiveSupport::Notifications is stood in for by an
# object with the same `subscribe(name, subscriber)` and the same five-argument call.
class ActiveRecordSubscriberTest < Minitest::Test
  class FakeNotifications
    attr_reader :subscribers

    def initialize
      @subscribers = Hash.new { |hash, key| hash[key] = [] }
    end

    def subscribe(name, subscriber)
      @subscribers[name] << subscriber
    end

    def instrument(name, payload)
      start = Time.now
      finish = start + 0.002
      @subscribers[name].each { |subscriber| subscriber.call(name, start, finish, "id", payload) }
    end
  end

  def setup
    @notifications = FakeNotifications.new
    @accounting = Heron::Profiler.accounting
    Heron::Profiler::Sql::ActiveRecordSubscriber.subscribe(@notifications, Heron::Profiler.recorder)
  end

  def test_records_queries_of_the_current_request
    profile = @accounting.open(Heron::Profiler::RequestProfile.new("GET", "/", ""))
    3.times { |i| @notifications.instrument("sql.active_record", sql: "SELECT * FROM users WHERE id = #{i}", name: "User Load") }
    @notifications.instrument("sql.active_record", sql: "SELECT column_name FROM x", name: "SCHEMA")
    assert_equal 3, profile.queries.size
    query = profile.queries.first
    assert_equal [:active_record, "SELECT * FROM users WHERE id = ?"], [query.adapter, query.normalized]
    assert_in_delta 2.0, query.duration_ms, 0.01
    assert_match(/active_record_subscriber_test\.rb:\d+\z/, query.call_site)
  ensure
    @accounting.close(profile)
  end

  def test_ignores_queries_outside_a_request
    assert_nil @notifications.subscribers["sql.active_record"].first.call("sql.active_record", 0.0, 0.1, "i", sql: "SELECT 1")
  end
end
