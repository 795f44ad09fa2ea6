# frozen_string_literal: true

require "test_helper"
require "heron/profiler"

# The Meter is the C primitive the Ruby Middleware drives: it takes its cold work as Procs and
# says clearly what it is missing.
class MeterTest < Minitest::Test
  HOOKS = %i[dashboard memory flamegraph sql proxy_queue timing after_reply queries n_plus_one route keep body].freeze
  SETTINGS = { profile_path: "/__heron", sample: 1, cpu_sample: 1, proxies: false, loopback: true }.freeze

  def setup
    @store = Heron::Profiler::Store.new(10)
    @routes = Heron::Profiler::RouteStats.new
    @kept = []
  end

  def test_a_missing_hook_or_one_that_is_not_a_proc_is_refused
    assert_raises(KeyError) { meter(hooks.except(:keep)) }
    error = assert_raises(TypeError) { meter(hooks.merge(keep: @routes.method(:route_for))) }
    assert_match(/keep/, error.message)
    assert_raises(ArgumentError) { Heron::Profiler::Meter.new(app, Heron::Profiler.accounting, [], SETTINGS, hooks) }
  end

  # The route hook is asked only when the method or path changes; the Route's figures are C,
  # and the keep hook gets every record while fewer than Route::SLOWEST are kept.
  def test_routes_are_asked_per_new_path_and_counted_in_c
    asked = []
    meter = meter(hooks.merge(route: ->(method, path) { asked << [method, path]; @routes.route_for(method, path) }))
    [%w[GET /a], %w[GET /a], %w[POST /a], %w[GET /a], %w[GET /b]].each do |method, path|
      meter.call(Rack::MockRequest.env_for(path, method: method, "REMOTE_ADDR" => "127.0.0.1"))
    end
    assert_equal [%w[GET /a], %w[POST /a], %w[GET /a], %w[GET /b]], asked
    assert_equal({ "GET /a" => 3, "POST /a" => 1, "GET /b" => 1 }, @routes.export.to_h { |row| [row[:route], row[:count]] })
    assert_equal 5, @kept.size
    assert_equal 5, @store.size
  end

  def test_route_keeps_the_slowest_records_slowest_first
    route = Heron::Profiler::RouteStats::Route.new("GET /r")
    [3.0, 9.0, 1.0, 7.0, 5.0, 8.0, 2.0].each_with_index do |ms, i|
      route.keep({ id: "r#{i}", total_ms: ms, queries: [] }) if route.add(ms, 1)
    end
    assert_equal [9.0, 8.0, 7.0, 5.0, 3.0], route.slowest.map { |record| record[:total_ms] }
    assert_equal({ id: "r1", total_ms: 9.0, queries: [] }, route.find("r1"))
    assert_nil route.find("r2")
    assert_equal [7, 7, 9.0], route.export.values_at(:count, :queries, :max_ms)
    refute route.export[:slowest].first.key?(:queries)
  end

  # The env pass remembers what each key is by the key's identity (a server reuses its key
  # objects), which holds only while a key's bytes cannot change: an unfrozen key (a
  # compare_by_identity env keeps it as given) is read again every time.
  def test_a_key_whose_bytes_change_is_read_again
    meter = meter(hooks)
    key = +"HTTP_X_FORWARDED_FOR"
    env = Rack::MockRequest.env_for("/", "REMOTE_ADDR" => "127.0.0.1").compare_by_identity
    env[key] = "10.0.0.1"
    assert_nil meter.call(env.dup)[1]["server-timing"], "a forwarded request gets no timing"
    key.replace("HTTP_X_FORWARDED_XX")
    assert meter.call(env.dup)[1]["server-timing"], "the key is no forwarding header any more"
  end

  # A client sending ever-new header names fills the key cache, which starts over: every
  # request is still judged by its own headers.
  def test_many_header_names_are_judged_right
    meter = meter(hooks)
    shown = Array.new(600) do |i|
      env = Rack::MockRequest.env_for("/", "REMOTE_ADDR" => "127.0.0.1", "HTTP_X_NAME_#{i}" => "1")
      env["HTTP_X_REAL_IP"] = "10.0.0.1" if i % 3 == 0
      !meter.call(env)[1]["server-timing"].nil?
    end
    assert_equal Array.new(600) { |i| i % 3 != 0 }, shown
  end

  private

  def app = ->(_env) { [200, {}, ["ok"]] }

  def meter(hooks) = Heron::Profiler::Meter.new(app, Heron::Profiler.accounting, @store.ring, SETTINGS, hooks)

  def hooks
    none = ->(*) {}
    HOOKS.to_h { |name| [name, none] }.merge(
      route: @routes.method(:route_for).to_proc, keep: ->(route, profile) { @kept << profile; route.keep(Heron::Profiler::Record.of(profile)) },
      sql: -> { true }, push: nil
    )
  end
end
