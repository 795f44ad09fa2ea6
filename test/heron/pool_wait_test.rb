# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "json"
require_relative "../support/install_helper"
require_relative "../support/postgres"
require_relative "../support/rails_burst_app"

# Rails with its defaults under a burst (issue 27): a Rails 7.1 API app whose config/database.yml
# is the one `rails new` writes (pool 5, checkout_timeout left at its 5 s; see
# test/support/rails_burst_app.rb), served by `heron` with no Heron settings. 200 concurrent
# requests that each hold a connection for 200 ms (40 s of connection time for 5 connections: the
# last waits about 8 s) all answer 200, while 500 concurrent requests that sleep 1 s without the
# database are all in the app at once, on SQLite and on PostgreSQL. Without Heron::PoolWait a
# third of the burst fails with ActiveRecord::ConnectionTimeoutError after 5 s. Waiting requests
# get connections first come, first served; and a request whose deadline (`pool_timeout`) passes
# gets 503 and a log line that says why.
class PoolWaitTest < Minitest::Test
  include InstallHelper

  HOLDS = 200
  NAPS = 500

  def setup
    @gem_home = ENV["HERON_RAILS_GEM_HOME"] or skip "Rails is not installed (bin/setup-rails installs it; bin/test runs it)"
  end

  def test_sqlite_burst_on_the_default_pool_all_answer_while_sleepers_run_at_once
    with_rails_app(RailsBurstApp::SQLITE_YML, "development") { |port, _log| assert_burst(port) }
  end

  def test_postgresql_burst_on_the_default_pool_all_answer_while_sleepers_run_at_once
    with_rails_app(RailsBurstApp::POSTGRES_YML, "production", "DATABASE_URL" => TestPostgres.url) { |port, _log| assert_burst(port) }
  end

  # Five requests hold the 5 connections for 9 s; then 10 more arrive one after another, each
  # once the one before is seen waiting. They get connections in the order they came (the 5 first
  # after waiting past checkout_timeout), each holding it 0.2 s.
  def test_waiting_requests_get_connections_in_arrival_order_past_checkout_timeout
    with_rails_app(RailsBurstApp::SQLITE_YML, "development") do |port, _log|
      holders = Array.new(5) { Thread.new { get(port, "/hold?seconds=9") } }
      eventually(timeout: 60) { pool_stat(port)["busy"] == 5 }
      waiters = Array.new(10) do |i|
        thread = Thread.new { get(port, "/hold") }
        eventually(timeout: 60) { pool_stat(port)["waiting"] == i + 1 }
        thread
      end
      assert_equal ["200"] * 5, holders.map { |thread| thread.value.code }
      answers = waiters.map(&:value)
      assert_equal ["200"] * 10, answers.map(&:code), answers.map(&:body).join("\n")
      assert_equal (6..15).to_a, answers.map { |response| JSON.parse(response.body)["turn"] }
    end
  end

  # Five requests hold the 5 connections for 8 s; a sixth waits past its deadline (pool_timeout
  # 2, checkout_timeout 1) and gets 503, and the log says which pool, how long, and what to change.
  def test_a_request_past_its_deadline_gets_503_and_a_clear_error
    yml = RailsBurstApp::SQLITE_YML.sub("timeout: 5000", "timeout: 5000\n  checkout_timeout: 1")
    with_rails_app(yml, "production", {}, "pool_timeout 2\n") do |port, log|
      holders = Array.new(5) { Thread.new { get(port, "/hold?seconds=8") } }
      eventually(timeout: 60) { pool_stat(port)["busy"] == 5 }
      late = get(port, "/hold")
      assert_equal "503", late.code
      assert_equal ["200"] * 5, holders.map { |thread| thread.value.code }
      assert_match(/Heron::PoolWait::DeadlineError \(heron: no connection of database "primary" came free within this request's deadline \(pool_timeout 2 s from its arrival; waited \d+\.\d+ s\): all 5 connections of its pool were in use/,
                   File.read(File.join(File.dirname(log), "log/app.log")))
    end
  end

  private

  # 200 holds and 500 naps at once, each on its own connection: every hold answers 200 on one
  # of 5 connections, every nap answers 200 having been in the app with all 500.
  def assert_burst(port)
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    holds = Array.new(HOLDS) { Thread.new { timed { get(port, "/hold") } } }
    naps = Array.new(NAPS) { Thread.new { timed { get(port, "/nap?of=#{NAPS}") } } }
    holds = holds.map(&:value)
    naps = naps.map(&:value)
    failed = holds.map(&:first).reject { |response| response.code == "200" }
    assert_empty failed.map { |response| "#{response.code} #{response.body[0, 300]}" }, "holds that failed"
    assert_operator holds.map { |response, _| JSON.parse(response.body)["connection"] }.uniq.size, :<=, 5
    assert_equal [["200", NAPS]] * NAPS, naps.map { |response, _| [response.code, JSON.parse(response.body)["together"]] }
    report(started, holds, naps)
  end

  def pool_stat(port)
    JSON.parse(get(port, "/pool").body)
  end

  def timed
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    response = yield
    [response, Process.clock_gettime(Process::CLOCK_MONOTONIC) - started]
  end

  # Figures for the reader, not asserted: the last hold waits about 8 s on any machine, and
  # how long the naps take depends on how busy this one is.
  def report(started, holds, naps)
    total = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
    $stderr.puts format("\n%s: holds slowest %.1f s, naps slowest %.1f s (median %.1f s), all in %.1f s",
                        name, holds.map(&:last).max, naps.map(&:last).max, naps.map(&:last).sort[NAPS / 2], total)
  end

  def get(port, path)
    Net::HTTP.start("127.0.0.1", port, open_timeout: 60, read_timeout: 120) { |http| http.get(path) }
  end

  def with_rails_app(database_yml, environment, env = {}, heron_rb = nil)
    Dir.mktmpdir("heron-pool") do |dir|
      RailsBurstApp.write(dir, database_yml)
      File.write(File.join(dir, "config/heron.rb"), heron_rb) if heron_rb
      port = free_port
      env = env.merge(RailsApp.env(@gem_home, environment))
      argv = [RbConfig.ruby, File.join(ROOT, "exe/heron"), "-e", environment, "--no-metrics", "-b", "tcp://127.0.0.1:#{port}", "config.ru"]
      serving(env, argv, chdir: dir) do |log|
        up = get_when_up(port, "/up", log)
        assert_equal "200", up.code, "#{up.body}\n#{File.read(log)}"
        yield port, log
      end
    end
  end
end
