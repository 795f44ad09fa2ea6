# frozen_string_literal: true

require "test_helper"
require "heron/profiler"

class ServerTimingTest < Minitest::Test
  def profile(queue_ms: 1.234)
    profile = Heron::Profiler::RequestProfile.new("GET", "/", "", queue_ms: queue_ms)
    profile.add_query(Heron::Profiler::Query.new("SELECT 1", 2.0, nil, :sequel))
    profile.app_returned(200)
    profile
  end

  def test_value_lists_every_metric_in_w3c_syntax
    value = Heron::Profiler::ServerTiming.value(profile)
    assert_match(/\Aapp;dur=\d+\.\d\d, db;dur=2\.00;desc="1 queries", queue;dur=1\.23, cpu;dur=\d+\.\d\d, /, value)
    assert_match(/gc;desc="0 runs", alloc;desc="0 objects"\z/, value)
  end

  def test_queue_is_left_out_when_unknown
    refute_includes Heron::Profiler::ServerTiming.value(profile(queue_ms: nil)), "queue"
  end

  def test_appends_to_the_apps_value
    headers = { "server-timing" => "cache;desc=hit" }
    Heron::Profiler::ServerTiming.append(headers, profile)
    assert_match(/\Acache;desc=hit, app;dur=/, headers["server-timing"])
  end

  def test_appends_to_an_array_value_and_sets_a_missing_one
    headers = { "server-timing" => ["cache;desc=hit"] }
    Heron::Profiler::ServerTiming.append(headers, profile)
    assert_equal 2, headers["server-timing"].size
    assert_match(/\Aapp;/, Heron::Profiler::ServerTiming.append({}, profile)["server-timing"])
  end
end
