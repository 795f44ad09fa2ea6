# frozen_string_literal: true

# Issue 27's burst, Heron against Puma, on the Rails 7.1 app of test/support/rails_burst_app.rb
# (database.yml as `rails new` writes it: pool 5, checkout_timeout 5 s), on SQLite (development)
# and PostgreSQL (production, a throwaway cluster as in the tests):
# - burst: 200 concurrent requests that each hold a connection for 200 ms;
# - mixed: the same 200 with 500 concurrent requests that sleep 1 s without the database.
# Servers: Heron with no settings; Heron with `pool_timeout 0` (ActiveRecord's checkout_timeout
# alone: what Heron did before Heron::PoolWait); Puma with 5 threads. Every request has its own
# connection (a thread with Net::HTTP). Results: bench/results/rails_pool_burst.md.
#
#   HERON_RAILS_GEM_HOME=tmp/rails-gems bundle exec ruby bench/rails_pool_burst.rb [sqlite|postgresql]
require "net/http"
require "json"
require "tmpdir"
require "rbconfig"
require_relative "../test/support/rails_burst_app"
require_relative "../test/support/postgres"
require_relative "../test/support/free_port"
require_relative "lib/clock"

module Bench
  # Runs each server on each database through both scenarios and prints one row per run.
  class RailsPoolBurst
    ROOT = File.expand_path("..", __dir__)
    HOLDS = 200
    NAPS = 500
    SERVERS = {
      "heron" => nil,
      "heron pool_timeout 0" => "pool_timeout 0\n",
      "puma -t 5:5" => :puma
    }.freeze

    def initialize(gem_home, databases)
      @gem_home = gem_home
      @databases = databases
    end

    # Prints a Markdown table, one row per server, database and scenario.
    # @return [void]
    def run
      puts "| server | database | scenario | holds 200 | holds 5xx | slowest hold | naps 200 | median nap | slowest nap | all done |"
      puts "|---|---|---|---|---|---|---|---|---|---|"
      @databases.each do |database|
        SERVERS.each do |server, how|
          %i[burst mixed].each { |scenario| puts row(server, database, scenario, measure(how, database, scenario)) }
        end
      end
    end

    private

    def measure(how, database, scenario)
      Dir.mktmpdir("heron-bench-rails") do |dir|
        yml, environment, env = database == "sqlite" ? [RailsBurstApp::SQLITE_YML, "development", {}] : [RailsBurstApp::POSTGRES_YML, "production", { "DATABASE_URL" => TestPostgres.url }]
        RailsBurstApp.write(dir, yml)
        File.write(File.join(dir, "config/heron.rb"), how) if how.is_a?(String)
        port = FreePort.free_port
        env = env.merge(RailsApp.env(@gem_home, environment), "RUBYLIB" => File.join(ROOT, "lib"))
        pid = unbundled { Process.spawn(env, *argv(how, port, environment), chdir: dir, %i[out err] => File.join(dir, "server.log"), pgroup: true) }
        begin
          wait_up(port)
          fire(port, scenario)
        ensure
          Process.kill("TERM", -pid)
          Process.wait(pid)
        end
      end
    end

    def argv(how, port, environment)
      if how == :puma
        [RbConfig.ruby, "-e", 'load Gem.bin_path("puma", "puma")', "--", "--no-config", "-t", "5:5", "-e", environment, "-b", "tcp://127.0.0.1:#{port}", "config.ru"]
      else
        [RbConfig.ruby, File.join(ROOT, "exe/heron"), "-e", environment, "--no-metrics", "-b", "tcp://127.0.0.1:#{port}", "config.ru"]
      end
    end

    # Rails is not in the bundle: the server runs with the gems of HERON_RAILS_GEM_HOME.
    def unbundled(&block)
      defined?(Bundler) ? Bundler.with_unbundled_env(&block) : yield
    end

    def wait_up(port)
      deadline = Bench::Clock.now + 120
      begin
        get(port, "/up")
      rescue SystemCallError, IOError
        raise "server did not come up" if Bench::Clock.now > deadline
        sleep 0.2
        retry
      end
    end

    def fire(port, scenario)
      started = Bench::Clock.now
      holds = Array.new(HOLDS) { Thread.new { timed { get(port, "/hold") } } }
      naps = scenario == :mixed ? Array.new(NAPS) { Thread.new { timed { get(port, "/nap?of=0") } } } : []
      { holds: holds.map(&:value), naps: naps.map(&:value), total: Bench::Clock.now - started }
    end

    def row(server, database, scenario, result)
      holds = result[:holds]
      naps = result[:naps]
      nap_times = naps.map(&:last).sort
      cells = [server, database, scenario,
               holds.count { |code, _| code == "200" }, holds.count { |code, _| code.start_with?("5") },
               seconds(holds.map(&:last).max),
               naps.empty? ? "" : naps.count { |code, _| code == "200" },
               naps.empty? ? "" : seconds(nap_times[nap_times.size / 2]),
               naps.empty? ? "" : seconds(nap_times.last),
               seconds(result[:total])]
      "| #{cells.join(' | ')} |"
    end

    def timed
      started = Bench::Clock.now
      code = yield.code
      [code, Bench::Clock.now - started]
    rescue StandardError => e
      [e.class.name, Bench::Clock.now - started]
    end

    def get(port, path)
      Net::HTTP.start("127.0.0.1", port, open_timeout: 120, read_timeout: 300) { |http| http.get(path) }
    end

    def seconds(value) = format("%.1f s", value)
  end
end

if $PROGRAM_NAME == __FILE__
  gem_home = ENV["HERON_RAILS_GEM_HOME"] or abort "set HERON_RAILS_GEM_HOME (bin/setup-rails prints it)"
  databases = ARGV.empty? ? %w[sqlite postgresql] : ARGV
  Bench::RailsPoolBurst.new(File.expand_path(gem_home), databases).run
end
