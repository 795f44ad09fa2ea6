# frozen_string_literal: true

require "test_helper"
require "heron/profiler"
require "stringio"
require_relative "sql/database_fixtures"

class MiddlewareTest < Minitest::Test
  include DatabaseFixtures

  HELLO = ->(_env) { [200, { "content-type" => "text/plain" }, ["hello"]] }

  def setup
    @store = Heron::Profiler::Store.new
    @log = StringIO.new
  end

  def config(**settings)
    Heron::Configuration.new(environment: "development", error_io: @log, trusted_proxies: ["127.0.0.1"], **settings)
  end

  # The logger defaults to Heron's on the configuration's error_io, as Heron's AppLoader passes it.
  def middleware(app = HELLO, logger: nil, **settings)
    config = config(**settings)
    inner = Heron::Profiler::Middleware.new(Rack::Lint.new(app), config, logger: logger || Heron::Log::Logger.new(config), store: @store)
    Rack::Lint.new(inner)
  end

  # @return [String, nil] the store id a response's server-timing names.
  def record_id(headers)
    Heron::Profiler.record_id(headers["server-timing"])
  end

  # From loopback: a trusted proxy, and a client allowed to see profiling data.
  def get(app, path = "/", env = {})
    Rack::MockRequest.new(app).get(path, { "REMOTE_ADDR" => "127.0.0.1" }.merge(env))
  end

  def posts_app
    db = DatabaseFixtures.database(:sqlite)
    lambda do |_env|
      [200, { "content-type" => "text/plain" }, [load_posts_one_by_one(db).to_s]]
    end
  end

  def test_server_timing_id_header_and_record_on_body_close
    response = get(middleware, "/hello?a=1", "HTTP_X_REQUEST_START" => "t=#{Time.now.to_f - 0.01}")
    assert_match(/\Aapp;dur=[\d.]+, queue;dur=[\d.]+, reactor;dur=[\d.]+, cpu;/, response["server-timing"])
    record = @store.find(record_id(response))
    assert_equal ["GET", "/hello", "a=1", 200], record.values_at(:method, :path, :query, :status)
    assert_operator record[:queue_ms], :>=, 10.0
    assert_operator record[:total_ms], :>=, record[:app_ms]
    assert_nil record[:after_reply_ms]
  end

  def test_the_apps_server_timing_is_kept
    app = ->(_env) { [200, { "server-timing" => "cache;desc=hit" }, []] }
    assert_match(/\Acache;desc=hit, app;dur=/, get(middleware(app))["server-timing"])
  end

  # Rack 3 asks for unfrozen headers, but an app that shares one frozen Hash must not turn every
  # profiled request into a 500 (nor collect Server-Timing entries across requests).
  def test_frozen_headers_from_a_non_conforming_app_are_copied
    shared = { "content-type" => "text/plain" }.freeze
    inner = Heron::Profiler::Middleware.new(->(_env) { [200, shared, ["ok"]] }, config, store: @store)
    2.times do
      response = get(inner)
      assert_equal 200, response.status
      assert_match(/\Aapp;dur=[\d.]+, /, response["server-timing"])
      assert_equal 1, response["server-timing"].scan("app;dur=").size
    end
    assert_equal({ "content-type" => "text/plain" }, shared)
  end

  def test_body_close_completes_the_record_and_after_reply_is_timed
    env = Rack::MockRequest.env_for("/", "rack.after_reply" => [-> { sleep 0.01 }], "REMOTE_ADDR" => "127.0.0.1",
                                         "heron.request_start" => Process.clock_gettime(Process::CLOCK_MONOTONIC))
    _status, headers, body = middleware.call(env)
    id = record_id(headers)
    assert_nil @store.find(id)
    body.close
    assert_nil @store.find(id)[:after_reply_ms]
    env["rack.after_reply"].each(&:call)
    assert_operator @store.find(id)[:after_reply_ms], :>=, 10.0
  end

  def test_no_after_reply_callables_means_zero
    env = Rack::MockRequest.env_for("/", "rack.after_reply" => [], "REMOTE_ADDR" => "127.0.0.1")
    _status, headers, body = middleware.call(env)
    body.close
    assert_equal [0.0, 200], @store.find(record_id(headers)).values_at(:after_reply_ms, :status)
  end

  def test_an_app_error_is_recorded_as_500_and_raised
    app = ->(_env) { raise ArgumentError, "boom" }
    assert_raises(ArgumentError) { middleware(app).call(Rack::MockRequest.env_for("/oops")) }
    assert_equal [500, "/oops"], @store.recent.first.values_at(:status, :path)
  end

  def test_n_plus_one_header_log_and_record_in_development
    response = get(middleware(posts_app), "/users")
    assert_match(/\A1 query x3 at heron-profiler\/test\/heron\/profiler\/sql\/database_fixtures\.rb:\d+ \(SELECT/, response["x-heron-n-plus-one"])
    assert_match(/heron: N\+1 query in GET \/users: 3x at .*database_fixtures\.rb:\d+: SELECT/, @log.string)
    record = @store.find(record_id(response))
    assert_equal [4, 3], [record[:db_count], record[:n_plus_one].first[:count]]
    assert_match(/db;dur=[\d.]+;desc="4 queries"/, response["server-timing"])
  end

  def test_n_plus_one_threshold_environment_and_logger
    logger = Minitest::Mock.new
    logger.expect(:warn, nil, [/N\+1 query in GET \//])
    response = get(middleware(posts_app, logger: logger, environment: "production"))
    assert_nil response["x-heron-n-plus-one"]
    logger.verify
    assert_nil get(middleware(posts_app, n_plus_one_threshold: 4))["x-heron-n-plus-one"]
  end

  def test_raise_on_n_plus_one
    Heron::Profiler.raise_on_n_plus_one = true
    error = assert_raises(Heron::Profiler::NPlusOneError) { get(middleware(posts_app)) }
    assert_equal 3, error.findings.first[:count]
  ensure
    Heron::Profiler.raise_on_n_plus_one = false
  end

  def test_dashboard_path_delegates_or_answers_404
    dashboard = Struct.new(:store, :config) { def call(_env) = [200, { "content-type" => "text/plain" }, ["dash"]] }
    Heron::Profiler.stub(:dashboard_class, dashboard) { assert_equal "dash", get(middleware, "/__heron/requests").body }
    Heron::Profiler.stub(:dashboard_class, nil) { assert_equal 404, get(middleware, "/__heron").status }
    assert_empty @store.recent
  end

  # The SQL hooks are looked for again only once something new was required (ActiveRecord may
  # load after the app is built), not on every request.
  def test_sql_hooks_are_installed_again_only_after_a_require
    counting = Class.new(Heron::Profiler::Middleware) do
      attr_reader :installs

      def install_hooks
        @installs = (@installs || 0) + 1
        false
      end
    end
    inner = counting.new(HELLO, config, store: @store)
    3.times { get(inner) }
    assert_equal 1, inner.installs
    $LOADED_FEATURES << "/heron-test/loaded_later.rb"
    2.times { get(inner) }
    assert_equal 2, inner.installs
  ensure
    $LOADED_FEATURES.delete("/heron-test/loaded_later.rb")
  end

  def test_memory_query_delegates_when_available
    memory = Struct.new(:app, :config) { def call(_env) = [200, { "content-type" => "text/plain" }, ["mem"]] }
    Heron::Profiler.stub(:memory_profile_class, memory) { assert_equal "mem", get(middleware, "/?__heron=memory").body }
    Heron::Profiler.stub(:memory_profile_class, nil) { assert_equal "hello", get(middleware, "/?__heron=memory").body }
  end

  def test_the_safelist_silences_a_table_or_call_site_everywhere
    ["posts", "heron-profiler/test/heron/profiler/sql/database_fixtures.rb"].each do |entry|
      response = get(middleware(posts_app, n_plus_one_safelist: [entry]), "/users")
      assert_nil response["x-heron-n-plus-one"]
      assert_empty @store.find(record_id(response))[:n_plus_one]
    end
    assert_empty @log.string
    response = get(middleware(posts_app, n_plus_one_safelist: ["users"]), "/users")
    assert_match(/x3 at/, response["x-heron-n-plus-one"])
  end

  # 1,003 statements: the record keeps the first 1,000 and says so, and its per-shape count, its
  # N+1 count and its query count all say 1,003.
  def test_counts_are_honest_when_more_queries_ran_than_are_kept
    db = DatabaseFixtures.database(:sqlite)
    app = ->(_env) { 1003.times { |i| db[:posts].where(user_id: i).all }; [200, {}, ["ok"]] }
    profiled = middleware(app)
    id = record_id(get(profiled, "/many"))
    record = @store.find(id)
    assert_equal [1003, 1000], [record[:db_count], record[:queries].size]
    assert_equal [1003], record[:n_plus_one].map { |finding| finding[:count] }
    assert_equal [1003], record[:shapes].map { |shape| shape[:count] }
    html = get(profiled, "/__heron/requests/#{id}").body
    assert_includes html, "1,003 queries, first 1,000 stored"
    assert_includes html, %(<td class="num">1,003</td>)
    refute_includes html, "All 1,000 queries"
  end

  def test_custom_steps_reach_server_timing_and_the_record
    app = lambda do |_env|
      2.times { Heron::Profiler.step("render") { sleep 0.002 } }
      Heron::Profiler.step(:db) { nil }
      [200, {}, [Heron::Profiler.step("value") { "ok" }]]
    end
    response = get(middleware(app))
    assert_equal "ok", response.body
    assert_match(/heron;desc="[^"]+", render;dur=[\d.]+, step-db;dur=[\d.]+, value;dur=[\d.]+\z/, response["server-timing"])
    assert_equal record_id(response), Heron::Profiler.record_id(response["server-timing"])
    steps = @store.find(record_id(response))[:steps]
    assert_equal [["render", 2], ["step-db", 1], ["value", 1]], steps.map { |step| step.values_at(:name, :count) }
    assert_operator steps.first[:ms], :>=, 4.0
  end

  def test_a_step_outside_a_request_only_runs_its_block
    assert_equal 42, Heron::Profiler.step("idle") { 42 }
  end

  def test_many_step_names_are_bounded
    app = lambda do |_env|
      40.times { |i| Heron::Profiler.step("s#{i}") { nil } }
      [200, {}, ["ok"]]
    end
    response = get(middleware(app))
    steps = @store.find(record_id(response))[:steps]
    assert_equal 17, steps.size
    assert_equal ["other-steps", 24], steps.last.values_at(:name, :count)
    assert_operator response["server-timing"].bytesize, :<, 1024
  end

  # The ring holds 3; the slow request is pushed out of it but kept as its route's slowest.
  def test_slowest_per_route_outlive_the_ring_and_routes_show_on_the_dashboard
    store = Heron::Profiler::Store.new(3)
    app = ->(env) { sleep 0.2 if env["PATH_INFO"] == "/users/1"; [200, {}, ["ok"]] }
    profiled = Rack::Lint.new(Heron::Profiler::Middleware.new(Rack::Lint.new(app), config, store: store))
    slow = record_id(get(profiled, "/users/1"))
    10.times { |i| get(profiled, "/users/#{i + 2}") }
    assert_nil store.find(slow)
    page = get(profiled, "/__heron/requests/#{slow}")
    assert_equal 200, page.status
    assert_includes page.body, "<code>#{slow}</code>"
    row = JSON.parse(get(profiled, "/__heron.json").body)["routes"].find { |r| r["route"] == "GET /users/:id" }
    assert_equal [11, slow], [row["count"], row["slowest"].first["id"]]
    assert_operator row["max_ms"], :>=, 200.0
    assert_operator row["p50_ms"], :<, 200.0
    assert_includes get(profiled, "/__heron").body, "GET /users/:id"
  end

  def test_each_query_keeps_its_app_backtrace_folded_on_the_page
    profiled = middleware(posts_app, query_backtrace: 3)
    id = record_id(get(profiled, "/users"))
    query = @store.find(id)[:queries].last
    assert_equal 3, query[:backtrace].size
    assert_equal query[:call_site], query[:backtrace].first
    assert_match(/\Aheron-profiler\/test\/heron\/profiler\/sql\/database_fixtures\.rb:\d+:in `/, query[:backtrace][1])
    assert(query[:backtrace].none? { |frame| frame.include?("/gems/") || frame.start_with?("lib/heron") })
    assert_includes get(profiled, "/__heron/requests/#{id}").body, "<details><summary><code>#{query[:call_site]}</code>"
    id = record_id(get(middleware(posts_app, query_backtrace: 1), "/users"))
    refute @store.find(id)[:queries].last.key?(:backtrace)
  ensure
    Heron::Profiler.recorder.configure(config)
  end

  def test_more_directories_can_be_left_out_of_call_sites
    app = middleware(posts_app, query_backtrace_exclude: ["heron-profiler/test/heron/profiler/sql"])
    query = @store.find(record_id(get(app, "/users")))[:queries].last
    assert_match(%r{\Aheron-profiler/test/heron/profiler/middleware_test\.rb:\d+\z}, query[:call_site])
  ensure
    Heron::Profiler.recorder.configure(config)
  end
end

require_relative "profiled_server"

# The middleware behind the real server: response_finished, after_reply and queue time as
# Heron provides them, and N+1 detection over PostgreSQL.
class MiddlewareServerTest < Minitest::Test
  include ProfiledServer
  include DatabaseFixtures

  def test_total_queue_and_after_reply_times
    app = lambda do |env|
      env["rack.after_reply"] << -> { sleep 0.03 }
      sleep 0.02
      [200, { "content-type" => "text/plain" }, ["hi"]]
    end
    with_profiled_server(app) do |port|
      status, headers, = http_get(port, "/timed?x=1")
      assert_equal 200, status
      assert_match(/\Aapp;dur=[\d.]+, queue;dur=[\d.]+, reactor;dur=[\d.]+, cpu;dur=/, headers["server-timing"])
      record = profile_record(headers)
      assert_equal ["/timed", "x=1", 200], record.values_at(:path, :query, :status)
      assert_operator record[:app_ms], :>=, 20.0
      assert_operator record[:total_ms], :>=, record[:app_ms]
      assert_operator record[:after_reply_ms], :>=, 30.0
      assert_operator record[:queue_ms], :<, record[:total_ms]
    end
  end

  def test_queue_time_from_a_proxy_header
    with_profiled_server(->(_env) { [204, {}, []] }, trusted_proxies: ["127.0.0.1"]) do |port|
      _status, headers, = http_get(port, "/", "X-Request-Start: t=#{((Time.now.to_f - 0.25) * 1_000_000).to_i}\r\n")
      assert_operator profile_record(headers)[:queue_ms], :>=, 250.0
    end
  end

  def test_n_plus_one_over_postgres
    db = DatabaseFixtures.database(:postgres)
    app = ->(_env) { [200, { "content-type" => "text/plain" }, [load_posts_one_by_one(db).to_s]] }
    log = StringIO.new
    with_profiled_server(app, error_io: log) do |port|
      _status, headers, body = http_get(port, "/users")
      assert_equal "6", body
      assert_match(/\A1 query x3 at heron-profiler\/test\/heron\/profiler\/sql\/database_fixtures\.rb:\d+ \(SELECT \* FROM "posts"/,
                   headers["x-heron-n-plus-one"])
      record = profile_record(headers)
      assert_equal 4, record[:db_count]
      assert_equal [:sequel], record[:queries].map { |query| query[:adapter] }.uniq
      assert_match(/N\+1 query in GET \/users: 3x at .*database_fixtures\.rb:\d+: SELECT/, log.string)
    end
  end
end

# The C paths of Middleware#call without Rack::Lint around them (Lint would turn every body
# into one that is not an Array).
class MiddlewareBodyTest < Minitest::Test
  def setup
    @store = Heron::Profiler::Store.new
    @config = Heron::Configuration.new(environment: "production", error_io: StringIO.new)
  end

  # @return [String, nil] the store id a response's server-timing names.
  def record_id(headers)
    Heron::Profiler.record_id(headers["server-timing"])
  end

  def call(app, path = "/")
    Heron::Profiler::Middleware.new(app, @config, store: @store).call(Rack::MockRequest.env_for(path, "REMOTE_ADDR" => "127.0.0.1"))
  end

  def test_an_array_body_is_finished_when_the_app_returns
    body = ["hi"]
    response = [201, { "content-type" => "text/plain" }, body]
    assert_same response, call(->(_env) { response }) # nothing replaced: the app's own Array
    status, headers, returned = response
    assert_same body, returned
    record = @store.find(record_id(headers))
    assert_equal [201, "/"], record.values_at(:status, :path)
    assert_operator record[:total_ms], :>=, record[:app_ms]
    assert_equal 201, status
  end

  def test_any_other_body_is_finished_when_closed
    body = Struct.new(:parts) { def each(&) = parts.each(&) }.new(["a"])
    _status, headers, returned = call(->(_env) { [200, {}, body] })
    assert_instance_of Heron::Profiler::ProfiledBody, returned
    assert_nil @store.find(record_id(headers))
    returned.close
    assert_equal 200, @store.find(record_id(headers))[:status]
  end

  def test_a_response_that_is_not_a_triple_passes_through_and_is_recorded
    assert_equal :nonsense, call(->(_env) { :nonsense })
    assert_equal [[500, "/"]], @store.recent.map { |record| record.values_at(:status, :path) }
  end

  def test_headers_that_are_not_a_hash_pass_through
    status, headers, = call(->(_env) { [200, [%w[x-a 1]], []] })
    assert_equal [200, [%w[x-a 1]]], [status, headers]
  end

  def test_a_throw_through_the_app_finishes_the_profile
    catch(:escape) { call(->(_env) { throw :escape }) }
    assert_equal 500, @store.recent.first[:status]
    refute Heron::Profiler.accounting.tracing?
  end
end

class MiddlewareSampleTest < Minitest::Test
  def test_one_request_in_n_is_measured_the_first_included
    store = Heron::Profiler::Store.new
    config = Heron::Configuration.new(environment: "production", profile_sample: 3)
    app = Heron::Profiler::Middleware.new(->(_env) { [200, {}, ["ok"]] }, config, store: store)
    timed = Array.new(7) { |i| app.call(Rack::MockRequest.env_for("/#{i}", "REMOTE_ADDR" => "::1"))[1].key?("server-timing") }
    assert_equal [true, false, false, true, false, false, true], timed
    assert_equal %w[/6 /3 /0], store.recent.map { |record| record[:path] }
  end

  # Every measured request gets the time its fibers held the reactor; the thread CPU clock (a
  # system call at each fiber switch) is read for the first and one in profile_cpu_sample after.
  def test_one_measured_request_in_n_gets_its_cpu_time
    store = Heron::Profiler::Store.new
    config = Heron::Configuration.new(environment: "production", profile_cpu_sample: 3)
    app = Heron::Profiler::Middleware.new(->(_env) { [200, {}, ["ok"]] }, config, store: store)
    timings = Array.new(4) { |i| app.call(Rack::MockRequest.env_for("/#{i}", "REMOTE_ADDR" => "::1"))[1]["server-timing"] }
    assert_equal [true, false, false, true], timings.map { |timing| timing.include?(", cpu;dur=") }
    assert(timings.all? { |timing| timing.match?(/, reactor;dur=\d+\.\d\d, /) })
    records = store.recent.reverse
    assert_equal [true, false, false, true], records.map { |record| record[:cpu_ms].is_a?(Float) }
    assert(records.all? { |record| record[:reactor_ms] >= 0.0 })
  end

  def test_the_dashboard_answers_whatever_the_sample
    config = Heron::Configuration.new(environment: "production", profile_sample: 1000)
    app = Heron::Profiler::Middleware.new(->(_env) { [200, {}, ["ok"]] }, config, store: Heron::Profiler::Store.new)
    2.times { assert_equal 200, app.call(Rack::MockRequest.env_for("/__heron.json", "REMOTE_ADDR" => "127.0.0.1"))[0] }
  end
end
