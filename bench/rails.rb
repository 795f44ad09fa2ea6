# frozen_string_literal: true

# A generated-style Rails 7.1 API app on PostgreSQL in production mode, served by Heron, Puma
# (5 threads, as generated, and a tuned thread count) and Falcon (`falcon host`, as its Rails
# guide advises for production) in one run, one process each:
#
#   HERON_RAILS_GEM_HOME=DIR bundle exec ruby bench/rails.rb [--rates 10,100,300,1000] [--seconds 10]
#     [--only sleep,db,json] [--servers heron,puma,puma-tuned,falcon] [--tuned-threads 50] [--out FILE]
#
# - sleep: `/sleep?ms=1000` (seed 003's endpoint: the action sleeps, touching no database) at
#   rising open-loop rates with `heron attack`; a server whose row at one rate has more than 10%
#   of the offered requests failed (not answered 2xx within TIMEOUT) is not offered the higher
#   rates: its queue would only grow. Each row lasts at most --seconds + TIMEOUT, so a server
#   that falls behind (Puma's 5 threads serve 5 of these a second) bounds the run's time.
# - db: `/db` holds a database connection for `SELECT pg_sleep(0.05)`, offered open loop at 80%
#   of what the pool can serve (pool 5: 80/s; pool 50: 800/s). The pool is the generated
#   `RAILS_MAX_THREADS` (5, or 50 for the pool-50 rows; puma-tuned's is its thread count).
# - json: `/posts`, 20 records rendered as JSON, closed loop with wrk (16 connections): requests
#   per second and per server CPU-second, with the server's CPU and run-queue seconds (on a shared
#   machine one busy thread is given less CPU than several, which lowers its per-CPU-second figure).
# Every server must answer `/posts` 200 before a row starts. Needs Rails from bin/setup-rails
# (outside the bundle), PostgreSQL's server binaries (initdb) and wrk, as bin/setup installs.
# Writes bench/results/rails.md.

require "json"
require "net/http"
require "optparse"
require "rbconfig"
require "tmpdir"
require "fileutils"
require "etc"
require "bundler"
require_relative "lib/options"
require_relative "lib/report_file"
require_relative "lib/server_process"
require_relative "lib/clock"
require_relative "lib/heron_attack"
require_relative "lib/machine"
require_relative "lib/proc_fs"
require_relative "lib/wrk"
require_relative "rails_app/app_files"
require_relative "rails_app/attack_row"
require_relative "../test/support/postgres"

# Runs the scenarios against each server and writes the markdown report.
class RailsBench
  ROOT = File.expand_path("..", __dir__)
  SERVERS = %w[heron puma puma-tuned falcon].freeze
  TIMEOUT = 30 # seconds heron attack waits for one answer (a typical router's limit); bounds each row

  def initialize(argv)
    @argv_text = argv.join(" ")
    @rates = [10, 100, 300, 1000]
    @seconds = 10
    @only = %w[sleep db json]
    @servers = SERVERS
    @tuned = 50
    @out = File.join(ROOT, "bench/results/rails.md")
    parse(argv)
    @rows = Hash.new { |h, k| h[k] = [] }
    @skipped = []
  end

  def run
    @load_before = loadavg
    @gem_home = rails_gem_home
    Dir.mktmpdir("heron-rails-bench") do |dir|
      at_exit { warn "logs: #{dir}/log" } if ENV["DEBUG"]
      @app = RailsApp::AppFiles.write(dir)
      @database_url = seed_database
      sleep_rows if @only.include?("sleep")
      db_rows if @only.include?("db")
      json_rows if @only.include?("json")
    end
    Bench::ReportFile.publish(@out, markdown)
  end

  private

  def parse(argv)
    OptionParser.new do |o|
      Bench::Options.rates(o, @rates) { |rates| @rates = rates }
      o.on("--seconds N", Integer, "seconds per row (default 10)") { |v| @seconds = v }
      o.on("--only LIST", Array, "scenarios: sleep, db, json") { |v| @only = v }
      o.on("--servers LIST", Array, "servers: #{SERVERS.join(', ')}") { |v| @servers = v }
      o.on("--tuned-threads N", Integer, "puma-tuned's threads and pool (default 50)") { |v| @tuned = v }
      Bench::Options.out(o) { |path| @out = path }
    end.parse!(argv)
  end

  def rails_gem_home
    dir = ENV["HERON_RAILS_GEM_HOME"] || IO.popen([File.join(ROOT, "bin/setup-rails")], &:read).strip
    abort "bench/rails.rb: Rails is not installed (bin/setup-rails failed)" if dir.empty?
    dir
  end

  def seed_database
    url = TestPostgres.url
    Bundler.with_unbundled_env { system(rails_env(5, url), RbConfig.ruby, "db/seed.rb", chdir: @app, exception: true) }
    url
  end

  def sleep_rows
    @servers.each do |name|
      @rates.each do |rate|
        load = loadavg1
        result = serving(name, pool(name, 5)) { |server| attack(server, "/sleep?ms=1000", rate) }
        @rows[:sleep] << [name, rate, *result.cells, load]
        next unless result.failed * 10 > result.planned

        @skipped << "#{name}: #{@rates.select { |r| r > rate }.join(', ')}/s" if rate < @rates.max
        break
      end
    end
  end

  def db_rows
    [5, 50].each do |size|
      @servers.each do |name|
        rate = size * 16 # 80% of size / 0.05 s
        load = loadavg1
        @rows[:db] << [name, pool(name, size), rate, *serving(name, pool(name, size)) { |server| attack(server, "/db", rate) }.cells, load]
      end
    end
  end

  def json_rows
    @servers.each do |name|
      load = loadavg1
      @rows[:json] << [name, *serving(name, pool(name, 5)) { |server| wrk(server) }, load]
    end
  end

  # puma-tuned always runs its tuned thread count, and its pool follows it as the generated
  # database.yml's RAILS_MAX_THREADS does.
  def pool(name, size) = name == "puma-tuned" ? [size, @tuned].max : size

  def serving(name, pool)
    port = Bench::ServerProcess.free_port
    log = File.join(@app, "log/#{name}.log")
    env = rails_env(pool, @database_url, name).merge("PORT" => port.to_s)
    server = Bench::ServerProcess.new(argv(name, port, pool), port: port, log: log, chdir: @app, env: env)
    Bundler.with_unbundled_env { server.start(timeout: 60) }
    wait_for_app(server)
    yield server
  rescue StandardError
    warn File.read(log)[-3000..] if File.exist?(log)
    raise
  ensure
    server&.stop
  end

  # The port can accept before the app answers (Falcon's container binds, then its child loads
  # Rails): every server is first asked for `/posts` until it answers 200, so no row measures a boot.
  def wait_for_app(server, timeout: 60)
    deadline = Bench::Clock.now + timeout
    until app_answers?(server)
      raise "#{server.url('/posts')} did not answer 200 within #{timeout}s" if Bench::Clock.now > deadline

      sleep 0.2
    end
  end

  def app_answers?(server)
    Net::HTTP.get_response(URI(server.url("/posts"))).code == "200"
  rescue SystemCallError, IOError, Net::ReadTimeout, Net::OpenTimeout
    false
  end

  def argv(name, port, pool)
    bind = "tcp://127.0.0.1:#{port}"
    case name
    when "heron" then [RbConfig.ruby, "#{ROOT}/exe/heron", "-e", "production", "-q", "-b", bind, "config.ru"]
    when "puma" then [RbConfig.ruby, "-S", "puma", "--no-config", "-t", "5:5", "-e", "production", "-b", bind, "config.ru"]
    when "puma-tuned" then [RbConfig.ruby, "-S", "puma", "--no-config", "-t", "#{pool}:#{pool}", "-e", "production", "-b", bind, "config.ru"]
    when "falcon" then [RbConfig.ruby, "-S", "falcon", "host", "falcon.rb"]
    else raise ArgumentError, "unknown server #{name}"
    end
  end

  def rails_env(pool, url, name = nil)
    env = { "RAILS_ENV" => "production", "RAILS_MAX_THREADS" => pool.to_s, "DATABASE_URL" => url,
            "GEM_HOME" => @gem_home, "GEM_PATH" => [@gem_home, *Gem.path].join(File::PATH_SEPARATOR),
            "RUBYLIB" => "#{ROOT}/lib" }
    # Falcon's documentation has Rails apps set fiber isolation themselves; Heron's Railtie does it.
    env["RAILS_FIBER_ISOLATION"] = "1" if name == "falcon"
    env
  end

  # @return [RailsApp::AttackRow]
  def attack(server, path, rate)
    cpu = server.tree_cpu_seconds
    args = [server.url(path), "--rate", rate.to_s, "--duration", @seconds.to_s, "--timeout", "#{TIMEOUT}s"]
    report = Bench::HeronAttack.report(args, json: File.join(@app, "tmp/attack.json"))
    RailsApp::AttackRow.new(report, planned: rate * @seconds, cpu_seconds: server.tree_cpu_seconds - cpu)
  end

  # @return [Array] req/s, requests per server CPU-second, the server's CPU and run-queue
  #   seconds, p99 (ms), errors
  def wrk(server)
    Bench::Wrk.run(server.url("/posts"), connections: 16, seconds: 3, threads: 1) # warm-up (YJIT off: inline caches, AR)
    cpu = server.tree_cpu_seconds
    waited = server.tree_run_queue_seconds
    r = Bench::Wrk.run(server.url("/posts"), connections: 16, seconds: @seconds, threads: 1, latency: true)
    cpu = server.tree_cpu_seconds - cpu
    [r.rps.round, (r.requests / cpu).round, format("%.2f / %.2f", cpu, server.tree_run_queue_seconds - waited),
     r.p99_ms.round(1), r.errors]
  end

  def loadavg = Bench::Machine.load

  def loadavg1 = Bench::ProcFS.load_averages.first

  def versions
    rails = Dir[File.join(@gem_home, "gems/railties-*")].map { |dir| File.basename(dir).delete_prefix("railties-") }.max
    heron = IO.popen(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], &:read).strip
    gems = %w[puma falcon].map { |name| "#{name.capitalize} #{Gem.loaded_specs[name]&.version || '?'}" }
    "Heron at #{heron}, Rails #{rails}, #{gems.join(', ')}"
  end

  # The JSON rows with each server's requests per CPU-second as a multiple of Heron's.
  def json_table_rows
    heron = @rows[:json].find { |row| row.first == "heron" }&.at(2)
    @rows[:json].map { |row| [*row.first(3), heron ? "#{(row[2].fdiv(heron)).round(2)}×" : "", *row.drop(3)] }
  end

  def skipped_note
    return "" if @skipped.empty?

    "Not offered (the row before had more than 10% failures): #{@skipped.join('; ')}."
  end

  def table(header, rows)
    ["| #{header.join(' | ')} |", "|#{'---|' * header.size}", *rows.map { |row| "| #{row.join(' | ')} |" }].join("\n")
  end

  def markdown
    <<~MD
      # Rails 7.1 on PostgreSQL, production: Heron, Puma, Falcon

      - Date: #{Time.now.utc.strftime('%Y-%m-%d %H:%M UTC')}; machine: #{Bench::Machine.summary}; load average at start #{@load_before}, at the end #{loadavg}
        (the machine is shared: each row gives the 1-minute load average when it started; prefer the per-CPU-second columns).
      - Command: `HERON_RAILS_GEM_HOME=… bundle exec ruby bench/rails.rb #{@argv_text}`; #{versions}.
      - App: bench/rails_app/app_files.rb (a generated-style API app: `pool: <%= ENV.fetch("RAILS_MAX_THREADS") { 5 } %>`,
        default checkout_timeout, production, eager loading, reloading off, YJIT off as Rails 7.1 leaves it).
      - Servers, one process each: Heron `exe/heron -e production -q` (no Heron settings; `-q` turns the access log off, as Puma's
        and Falcon's defaults have it); Puma `--no-config -t 5:5 -e production` (what Rails 7.1's generated config/puma.rb sets);
        puma-tuned `-t #{@tuned}:#{@tuned}` with the pool at #{@tuned} (RAILS_MAX_THREADS=#{@tuned}, as the generated
        database.yml ties them); Falcon `falcon host falcon.rb` (its Rails guide's production launcher, `count 1`) with
        `config.active_support.isolation_level = :fiber` (its Rails guide's advice).
      - Open-loop rows: `heron attack URL --rate R --duration #{@seconds} --timeout #{TIMEOUT}s`. "2xx" counts the answers with
        a 2xx status out of the R × #{@seconds} requests offered; "failed" is every other request (another status,
        a timeout after #{TIMEOUT} s, a reset, one never sent). p50/p99 are of the answered requests, from each request's due
        time (so queueing counts); a timed-out request is in "failed", not in p99. CPU ms per 2xx: user + system CPU of the
        server's process tree over the row, divided by its 2xx answers.

      ## seed 003 in Rails: `/sleep?ms=1000` (no database), rising rates

      #{table(['server', 'offered /s', '2xx', 'p50 ms', 'p99 ms', 'failed', 'server CPU ms / 2xx', 'load'], @rows[:sleep])}

      #{skipped_note}

      ## A DB-bound action: `SELECT pg_sleep(0.05)`, offered at 80% of the pool's capacity (pool / 0.05 s)

      #{table(['server', 'pool', 'offered /s', '2xx', 'p50 ms', 'p99 ms', 'failed', 'server CPU ms / 2xx', 'load'], @rows[:db])}

      ## JSON index of 20 records (`wrk -t1 -c16 -d#{@seconds}s` after a 3 s warm-up, closed loop)

      #{table(['server', 'req/s', 'requests per server CPU-second', 'vs Heron', 'server s on a CPU / in the run queue', 'p99 ms', 'non-2xx or socket errors', 'load'], json_table_rows)}

      "In the run queue": seconds the server's threads were runnable but waiting for a CPU, summed over its
      threads (/proc/PID/task/*/schedstat). On a shared machine a process given less CPU serves fewer
      requests per CPU-second, so compare that column between servers given similar CPU.
    MD
  end
end

RailsBench.new(ARGV).run if $PROGRAM_NAME == __FILE__
