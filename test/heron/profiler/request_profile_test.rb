# frozen_string_literal: true

require "test_helper"
require "heron/profiler"

class RequestProfileTest < Minitest::Test
  KEYS = %i[id method path query status started_at total_ms queue_ms app_ms db_ms db_count cpu_ms allocations
            gc_count after_reply_ms queries n_plus_one].freeze

  def test_record_has_exactly_the_store_keys
    profile = Heron::Profiler::RequestProfile.new("GET", "/x", "a=1")
    assert_equal KEYS.sort, profile.to_h.keys.sort
    assert_match(/\A[0-9a-z]+-[0-9a-z]+\z/, profile.id)
    refute_equal profile.id, Heron::Profiler::RequestProfile.new("GET", "/x", "").id
    assert_equal "GET /x", profile.to_s
  end

  def test_charges_counter_growth_since_mark
    profile = Heron::Profiler::RequestProfile.new("GET", "/", "")
    profile.mark(100, 2, 10.0)
    profile.charge(150, 3, 12.5)
    profile.mark(1000, 9, 50.0)
    profile.charge(1010, 9, 51.0)
    assert_equal [60, 1, 3.5], [profile.allocations, profile.gc_count, profile.cpu_ms]
  end

  def test_times_start_from_the_servers_first_byte
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC) - 0.05
    profile = Heron::Profiler::RequestProfile.new("GET", "/", "", started: started)
    assert_in_delta Time.now.to_f - 0.05, profile.to_h[:started_at], 0.01
    profile.app_returned(204)
    refute profile.finished?
    profile.finished
    assert profile.finished?
    assert_operator profile.total_ms, :>=, 50.0
    assert_operator profile.app_ms, :<, profile.total_ms
  end

  def test_finished_without_app_return_sets_app_time
    profile = Heron::Profiler::RequestProfile.new("GET", "/", "")
    profile.finished
    refute_nil profile.app_ms
  end

  def test_db_time_and_count
    profile = Heron::Profiler::RequestProfile.new("GET", "/", "")
    2.times { profile.add_query(Heron::Profiler::Query.new("SELECT 1", 1.5, nil, :sequel)) }
    assert_equal [3.0, 2], [profile.db_ms, profile.db_count]
    assert_equal 2, profile.to_h[:queries].size
  end
end

class RequestProfileTrimTest < Minitest::Test
  def test_trim_keeps_the_first_queries_and_the_totals
    profile = Heron::Profiler::RequestProfile.new("GET", "/", "")
    5.times { |i| profile.add_query(Heron::Profiler::Query.new("SELECT #{i}", 1.0, nil, :sequel)) }
    profile.trim_queries(2)
    assert_equal ["SELECT 0", "SELECT 1"], profile.queries.map(&:sql)
    assert_equal [5.0, 5], [profile.db_ms, profile.db_count]
    profile.trim_queries(10)
    assert_equal 2, profile.queries.size
  end
end
