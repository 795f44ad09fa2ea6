# frozen_string_literal: true

require "test_helper"
require "heron/profiler"
require "objspace"

class RequestProfileTest < Minitest::Test
  KEYS = %i[id method path query status started_at total_ms queue_ms app_ms db_ms db_count reactor_ms cpu_ms allocations
            gc_count after_reply_ms queries n_plus_one steps shapes].freeze

  def test_record_has_exactly_the_store_keys
    profile = Heron::Profiler::RequestProfile.new("GET", "/x", "a=1")
    assert_equal KEYS.sort, Heron::Profiler::Record.of(profile).keys.sort
    assert_match(/\A[0-9a-z]+-[0-9a-z]+\z/, profile.id)
    refute_equal profile.id, Heron::Profiler::RequestProfile.new("GET", "/x", "").id
    assert_equal "GET /x", profile.to_s
  end

  # Times are checked against clocks read just before and after, not against a fixed slack: a
  # busy machine can pause this thread for longer than any slack between two lines.
  def test_start_reads_the_request_from_the_env
    before, wall_before = mono, Time.now.to_f
    env = { "REQUEST_METHOD" => "POST", "PATH_INFO" => "/p", "QUERY_STRING" => "q=1", "heron.request_start" => before - 0.025 }
    profile = Heron::Profiler::RequestProfile.start(env)
    waited, wall_after = (mono - before) * 1000, Time.now.to_f
    assert_equal ["POST", "/p", "q=1"], [profile.request_method, profile.path, profile.query]
    assert_operator profile.queue_ms, :>=, 25.0
    assert_operator profile.queue_ms, :<=, 25.0 + waited
    assert_within wall_before - 0.025, wall_after - 0.025, profile.started_at
  end

  def test_start_without_a_server_stamp_has_no_queue_time
    wall_before = Time.now.to_f
    profile = Heron::Profiler::RequestProfile.start({ "REQUEST_METHOD" => "GET", "PATH_INFO" => "/" })
    wall_after = Time.now.to_f
    assert_nil profile.queue_ms
    assert_within wall_before, wall_after, profile.started_at
  end

  def mono = Process.clock_gettime(Process::CLOCK_MONOTONIC)

  # The realtime and monotonic clocks are read at different instants: a millisecond of slack.
  def assert_within(low, high, value)
    assert_operator value, :>=, low - 0.001
    assert_operator value, :<=, high + 0.001
  end

  # The middleware reads a trusted proxy's header (QueueTime) and hands its time to start.
  def test_a_proxy_stamp_wins_over_the_servers
    env = { "heron.request_start" => Process.clock_gettime(Process::CLOCK_MONOTONIC) - 0.5 }
    assert_equal 200.0, Heron::Profiler::RequestProfile.start(env, 200.0).queue_ms
    assert_in_delta 500.0, Heron::Profiler::RequestProfile.start(env, nil).queue_ms, 50.0
    assert_nil Heron::Profiler::RequestProfile.start({ "HTTP_X_REQUEST_START" => "t=#{Time.now.to_f - 0.2}" }).queue_ms
  end

  def test_start_needs_a_hash
    assert_raises(TypeError) { Heron::Profiler::RequestProfile.start(nil) }
  end

  def test_times_start_from_the_servers_first_byte
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC) - 0.05
    profile = Heron::Profiler::RequestProfile.new("GET", "/", "", nil, started)
    assert_in_delta Time.now.to_f - 0.05, Heron::Profiler::Record.of(profile)[:started_at], 0.01
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
    2.times { profile.add_query(Heron::Profiler::Query.new("SELECT 1", 1.5, nil, :sequel), 1.5) }
    assert_equal [3.0, 2], [profile.db_ms, profile.db_count]
    assert_equal 2, Heron::Profiler::Record.of(profile)[:queries].size
  end
end

# Profiles' structs are reused once the GC frees their objects (a free list of 256): a new
# profile must start clean whatever the last user of its struct left in it.
class RequestProfilePoolTest < Minitest::Test
  def used_profiles(count)
    count.times do
      profile = Heron::Profiler::RequestProfile.new("POST", "/used", "a=1")
      profile.add_query(Heron::Profiler::Query.new("SELECT 1", 2.0, nil, :sequel), 2.0)
      profile.app_returned(201)
      profile.finished
    end
    nil
  end

  def test_reused_structs_start_clean
    used_profiles(600) # more than the list keeps: the rest go back to malloc
    GC.start
    fresh = Array.new(600) { Heron::Profiler::RequestProfile.new("GET", "/", "") }
    fresh.each do |profile|
      assert_equal [nil, nil, nil, 0.0, 0, 0, 0.0], [profile.status, profile.app_ms, profile.total_ms, profile.db_ms,
                                                    profile.db_count, profile.allocations, profile.cpu_ms]
      assert_empty profile.queries
    end
    assert_operator ObjectSpace.memsize_of(fresh.first), :>=, 100
  end
end

class RequestProfileTrimTest < Minitest::Test
  def test_trim_keeps_the_first_queries_and_the_totals
    profile = Heron::Profiler::RequestProfile.new("GET", "/", "")
    5.times { |i| profile.add_query(Heron::Profiler::Query.new("SELECT #{i}", 1.0, nil, :sequel), 1.0) }
    profile.trim_queries(2)
    assert_equal ["SELECT 0", "SELECT 1"], profile.queries.map(&:sql)
    assert_equal [5.0, 5], [profile.db_ms, profile.db_count]
    profile.trim_queries(10)
    assert_equal 2, profile.queries.size
  end
end

class RequestProfileHeadersTest < Minitest::Test
  def profile(queue_ms = 1.234)
    profile = Heron::Profiler::RequestProfile.new("GET", "/", "", queue_ms)
    profile.add_query(Heron::Profiler::Query.new("SELECT 1", 2.0, nil, :sequel), 2.0)
    profile.app_returned(200)
    profile
  end

  def test_server_timing_lists_every_metric_in_w3c_syntax
    p = profile
    value = p.server_timing
    assert_match(/\Aapp;dur=\d+\.\d\d, db;dur=2\.00;desc="1 queries", queue;dur=1\.23, reactor;dur=\d+\.\d\d, cpu;dur=\d+\.\d\d, /, value)
    assert_match(/cpu;dur=\d+\.\d\d, alloc;desc="0 objects", heron;desc="#{p.id}"\z/, value)
    refute_includes profile(nil).server_timing, "queue"
  end

  # Each byte of the header costs the server (about 1 µs for these two on a hello world).
  def test_db_and_gc_entries_only_when_there_were_statements_or_gc_runs
    accounting = Heron::Profiler::FiberAccounting.new
    quiet = accounting.open(Heron::Profiler::RequestProfile.new("GET", "/", ""))
    accounting.close(quiet)
    refute_match(/\b(db|gc);/, quiet.server_timing)
    busy = accounting.open(profile)
    GC.start
    accounting.close(busy)
    assert_match(/, db;dur=2\.00;desc="1 queries", .*, gc;desc="1 runs", alloc;desc="\d+ objects", /, busy.server_timing)
  end

  def test_durations_round_to_hundredths
    assert_includes profile(0.005).server_timing, "queue;dur=0.01,"
    assert_includes profile(1234.567).server_timing, "queue;dur=1234.57,"
    assert_includes profile(-3.0).server_timing, "queue;dur=0.00,"
  end

  def test_add_headers_sets_server_timing_and_the_id
    headers = profile.then { |p| [p, p.add_headers({})] }
    assert_match(/\Aapp;dur=/, headers[1]["server-timing"])
    assert_equal headers[0].id, Heron::Profiler.record_id(headers[1]["server-timing"])
    assert_equal ["server-timing"], headers[1].keys
  end

  def test_add_headers_appends_to_the_apps_value_in_its_form
    assert_match(/\Acache;desc=hit, app;dur=/, profile.add_headers({ "server-timing" => "cache;desc=hit" })["server-timing"])
    value = profile.add_headers({ "server-timing" => ["cache;desc=hit"] })["server-timing"]
    assert_equal 2, value.size
    assert_match(/\Aapp;/, profile.add_headers({ "server-timing" => "" })["server-timing"])
    assert_match(/\Aapp;/, profile.add_headers({ "server-timing" => [] })["server-timing"])
  end
end
