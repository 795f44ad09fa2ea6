# frozen_string_literal: true

require "test_helper"
require "json"
require "tmpdir"
require_relative "../../../../test/support/install_helper"

# The profiler's middleware under real Puma (a thread per request) and Falcon (a fiber per
# request) processes, serving two requests whose SQL, sleeps and allocations interleave: A runs a
# query, waits for B's first query, allocates, sleeps and runs two more while B waits for them,
# then B runs its second. Each profile must hold exactly its own queries, its own N+1 finding,
# its own timings and its own allocations.
class ProfilerOtherServersTest < Minitest::Test
  include InstallHelper

  ROOT = File.expand_path("../../../..", __dir__)
  BIG = 200_000 # objects A allocates while B is in flight
  SLEEP = 0.2

  APP = <<~RUBY
    require "heron/profiler"
    require "sequel"
    DB = Sequel.sqlite(File.join(__dir__, "interleave.sqlite3"))
    DB.create_table?(:items) { primary_key :id; String :name }
    GATES = Hash.new { |hash, key| hash[key] = Thread::Queue.new }
    LOCK = Mutex.new
    gate = ->(name) { LOCK.synchronize { GATES[name] } }
    query = ->(name) { DB[:items].where(name: name).count }
    app = lambda do |env|
      run = env["QUERY_STRING"]
      if env["PATH_INFO"] == "/a"
        query.("a1-\#{run}")
        gate.("a1-\#{run}") << true
        gate.("b1-\#{run}").pop
        Array.new(#{BIG}) { |i| "x\#{i}" }
        sleep #{SLEEP}
        query.("a2-\#{run}")
        query.("a3-\#{run}")
        gate.("a2-\#{run}") << true
      else
        gate.("a1-\#{run}").pop
        query.("b1-\#{run}")
        gate.("b1-\#{run}") << true
        gate.("a2-\#{run}").pop
        query.("b2-\#{run}")
      end
      [200, { "content-type" => "text/plain" }, [env["PATH_INFO"]]]
    end
    run Heron::Profiler.wrap(app, profile_path: "/_profiler", logger: Logger.new(nil))
  RUBY

  # Allocations per thread ({Heron::Profiler::ThreadAllocations}, which wrap turns on here).
  def test_interleaved_requests_under_puma_threads
    assert_each_profile_its_own("puma") { |port| %W[puma -b tcp://127.0.0.1:#{port} -t 4:4 config.ru] }
  end

  # One thread, the process's allocation counter read at each fiber switch.
  def test_interleaved_requests_under_falcon_fibers
    assert_each_profile_its_own("falcon") { |port| %W[falcon serve --bind http://127.0.0.1:#{port} --count 1 --config config.ru] }
  end

  private

  # Serves APP with the server the block names for a port, sends A and B, and checks their records.
  def assert_each_profile_its_own(server)
    Dir.mktmpdir("heron-profiler-servers") do |dir|
      File.write(File.join(dir, "config.ru"), APP)
      port = free_port
      serve(dir, port, yield(port)) do |log|
        a, b = interleaved(port, log, server)
        assert_own(a, b, server)
        assert_operator a["allocations"], :>=, BIG
        assert_operator b["allocations"], :<, BIG / 10, "B's profile holds none of A's allocations"
      end
    end
  end

  def serve(dir, port, argv, &block)
    env = { "BUNDLE_GEMFILE" => File.join(ROOT, "Gemfile"), "RUBYOPT" => "-I#{File.join(ROOT, 'heron-profiler/lib')}",
            "RACK_ENV" => "development" }
    serving(env, ["bundle", "exec", *argv], chdir: dir) do |log|
      get_when_up(port, "/_profiler.json", log)
      block.call(log)
    end
  end

  # Sends A then B at once, each on its own connection, and returns their records.
  def interleaved(port, log, run)
    threads = %w[/a /b].map { |path| Thread.new { get_when_up(port, "#{path}?#{run}", log) } }
    threads.map(&:value).map do |response|
      assert_equal "200", response.code, response.body
      id = response["server-timing"].to_s[/heron;desc="([^"]+)"/, 1] or flunk("no heron entry: #{response.to_hash}")
      JSON.parse(get_when_up(port, "/_profiler/requests/#{id}.json", log).body).fetch("request")
    end
  end

  def assert_own(a, b, run)
    assert_equal [["/a", 3], ["/b", 2]], [a, b].map { |record| record.values_at("path", "db_count") }
    assert_equal %W[a1-#{run} a2-#{run} a3-#{run}], names(a), "A's profile holds exactly its own queries"
    assert_equal %W[b1-#{run} b2-#{run}], names(b), "B's profile holds exactly its own queries"
    assert_equal [[3], [2]], [a, b].map { |record| record.fetch("n_plus_one").map { |finding| finding.fetch("count") } },
                 "one N+1 each (the same query from one call site), of its own queries"
    assert_operator a["app_ms"], :>=, SLEEP * 1000
    assert_operator b["app_ms"], :>=, SLEEP * 1000, "B waited for A's second query"
  end

  # The name each query looked up (Sequel inlines the literal).
  def names(record)
    record.fetch("queries").map { |query| query.fetch("sql")[/'([ab]\d-\w+)'/, 1] }
  end
end
