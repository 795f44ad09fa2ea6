# frozen_string_literal: true

require "test_helper"
require "heron/profiler"

class RouteStatsTest < Minitest::Test
  Stats = Heron::Profiler::RouteStats

  def test_id_like_segments_make_one_route
    stats = Stats.new
    ["/users/42", "/users/7", "/users/0b8f0c1e-4a2b-4c3d-9e8f-0123456789ab",
     "/users/deadbeefdeadbeef0"].each { |path| stats.add(profile("GET", path)) }
    stats.add(profile("GET", "/users/me"))
    stats.add(profile("POST", "/users/42/posts"))
    assert_equal [["GET /users/:id", 4], ["GET /users/me", 1], ["POST /users/:id/posts", 1]],
                 Stats.merge([stats.export]).map { |row| row.values_at(:route, :count) }
  end

  def test_percentiles_max_mean_queries_and_slowest
    stats = Stats.new
    (1..100).each { |ms| stats.add(profile("GET", "/r", ms: ms.to_f, queries: ms.even? ? 2 : 0)) }
    row = Stats.merge([stats.export]).first
    assert_equal [100, 50.0, 95.0, 100.0, 1.0], row.values_at(:count, :p50_ms, :p95_ms, :max_ms, :mean_queries)
    assert_equal [100.0, 99.0, 98.0, 97.0, 96.0], row[:slowest].map { |record| record[:total_ms] }
    slowest_id = row[:slowest].first[:id]
    assert_equal 100.0, stats.find(slowest_id)[:total_ms]
    assert_nil stats.find("nope")
  end

  def test_processes_merge_and_json_keys_are_accepted
    one, two = Stats.new, Stats.new
    3.times { one.add(profile("GET", "/a", ms: 10.0)) }
    two.add(profile("GET", "/a", ms: 30.0, queries: 4))
    from_json = JSON.parse(JSON.generate(two.export))
    row = Stats.merge([one.export, from_json]).first
    assert_equal [4, 10.0, 30.0, 30.0, 1.0], row.values_at(:count, :p50_ms, :p95_ms, :max_ms, :mean_queries)
    assert_equal 30.0, row[:slowest].first["total_ms"]
  end

  def test_routes_are_bounded
    stats = Stats.new
    (Stats::MAX_ROUTES + 50).times { |i| stats.add(profile("GET", "/page-#{i}")) }
    rows = Stats.merge([stats.export])
    assert_equal Stats::MAX_ROUTES + 1, rows.size
    assert_equal [Stats::OTHER, 50], rows.first.values_at(:route, :count)
  end

  # #add remembers the route it last added to (C); a repeated path must still count under its own
  # method, its own RouteStats, and what the path said when it was added.
  def test_the_last_route_is_only_reused_for_the_same_stats_method_and_path
    one, two = Stats.new, Stats.new
    path = +"/users/42"
    one.add(profile("GET", path))
    two.add(profile("GET", path))
    one.add(profile("POST", path))
    path.replace("/about")
    one.add(profile("POST", path))
    one.add(profile("GET", path))
    one.add(profile("GET", "/users/7".b))
    assert_equal [["GET /about", 1], ["GET /users/:id", 2], ["POST /about", 1], ["POST /users/:id", 1]],
                 one.export.map { |row| row.values_at(:route, :count) }.sort
    assert_equal [["GET /users/:id", 1]], two.export.map { |row| row.values_at(:route, :count) }
  end

  # Route's figures are in C and read a RequestProfile's struct directly; the percentiles keep
  # the last Route::SAMPLES total times.
  def test_real_profiles_and_the_samples_ring
    stats = Stats.new
    profiles = Array.new(Stats::Route::SAMPLES + 10) { |i| finished(i < 10 ? 500.0 : 1.0) }
    profiles.each { |profile| stats.add(profile) }
    row = stats.export.first
    assert_equal [Stats::Route::SAMPLES + 10, Stats::Route::SAMPLES], [row[:count], row[:samples].size]
    assert_operator row[:samples].count { |ms| ms >= 500.0 }, :<, 10, "the oldest samples were overwritten"
    assert_equal Stats::Route::SLOWEST, row[:slowest].size
    assert(row[:slowest].all? { |record| record[:total_ms] >= 500.0 })
  end

  private

  # A finished RequestProfile whose total time is at least `ms`.
  def finished(ms)
    profile = Heron::Profiler::RequestProfile.new("GET", "/real", "", nil, Process.clock_gettime(Process::CLOCK_MONOTONIC) - ms / 1000.0)
    profile.app_returned(200)
    profile.finished
    profile
  end

  def profile(method, path, ms: 1.0, queries: 0)
    record = { id: "#{path}-#{ms}", method: method, path: path, total_ms: ms, db_count: queries }
    Struct.new(:request_method, :path, :total_ms, :db_count, :to_h).new(method, path, ms, queries, record)
  end
end
