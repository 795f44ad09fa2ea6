# frozen_string_literal: true

# A generated-style Rails 7.1 API app on PostgreSQL in production mode, served by Heron, Puma
# (5 threads, as generated, and a tuned thread count) and Falcon in one run:
#
#   bundle exec ruby bench/rails.rb [--rates 10,100,300,1000] [--seconds 10] [--only sleep,db,json]
#     [--servers heron,puma,puma-tuned,falcon] [--tuned-threads 50] [--out FILE]
#
# - sleep: `/sleep?ms=1000` (seed 003's endpoint: the action sleeps, touching no database) at
#   rising open-loop rates with `heron attack`; a server whose row at one rate has more than 10%
#   errors is not offered the higher rates (its queue would only grow).
# - db: `/db` holds a database connection for `SELECT pg_sleep(0.05)`, offered open loop at 80%
#   of what the pool can serve (pool 5: 80/s; pool 50: 800/s). The pool is the generated
#   `RAILS_MAX_THREADS` (5, or 50 for the pool-50 rows).
# - json: `/posts`, 20 records rendered as JSON, closed loop with wrk (16 connections): requests
#   per second and per server CPU-second.
# Needs Rails from bin/setup-rails (outside the bundle), PostgreSQL's server binaries (initdb) and
# wrk, as bin/setup installs. Writes bench/results/rails.md.

require "json"
require "optparse"
require "rbconfig"
require "tmpdir"
require "fileutils"
require "etc"
require "bundler"
require_relative "lib/server_process"
require_relative "lib/clock"
require_relative "lib/wrk"
require_relative "rails_app/app_files"
require_relative "../test/support/postgres"

# Runs the scenarios against each server and writes the markdown report.
class RailsBench
  ROOT = File.expand_path("..", __dir__)
  ATTACK = ["-I#{ROOT}/lib", "-I#{ROOT}/heron-attack/lib", "-e", 'require "heron/attack"; exit Heron::Attack::CLI.new(ARGV).run', "--"].freeze
  SERVERS = %w[heron puma puma-tuned falcon].freeze

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
    File.write(@out, markdown)
    puts markdown
  end

  private

  def parse(argv)
    OptionParser.new do |o|
      o.on("--rates LIST", Array, "sleep rows' offered rates (default 10,100,300,1000)") { |v| @rates = v.map { |r| Integer(r) } }
      o.on("--seconds N", Integer, "seconds per row (default 10)") { |v| @seconds = v }
      o.on("--only LIST", Array, "scenarios: sleep, db, json") { |v| @only = v }
      o.on("--servers LIST", Array, "servers: #{SERVERS.join(', ')}") { |v| @servers = v }
      o.on("--tuned-threads N", Integer, "puma-tuned's threads and pool (default 50)") { |v| @tuned = v }
      o.on("--out FILE", "markdown output") { |v| @out = v }
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
        result = serving(name, pool(name, 5)) { |server| attack(server, "/sleep?ms=1000", rate) }
        @rows[:sleep] << [name, rate, *result]
        break if result[3] > rate * @seconds / 10
      end
    end
  end

  def db_rows
    [5, 50].each do |size|
      @servers.each do |name|
        rate = size * 16 # 80% of size / 0.05 s
        @rows[:db] << [name, pool(name, size), rate, *serving(name, pool(name, size)) { |server| attack(server, "/db", rate) }]
      end
    end
  end

  def json_rows
    @servers.each do |name|
      @rows[:json] << [name, *serving(name, pool(name, 5)) { |server| wrk(server) }]
    end
  end

  # puma-tuned always runs its tuned thread count, and its pool follows it as the generated
  # database.yml's RAILS_MAX_THREADS does.
  def pool(name, size) = name == "puma-tuned" ? [size, @tuned].max : size

  def serving(name, pool)
    port = Bench::ServerProcess.free_port
    log = File.join(@app, "log/#{name}.log")
    server = Bench::ServerProcess.new(argv(name, port, pool), port: port, log: log, chdir: @app, env: rails_env(pool, @database_url, name))
    Bundler.with_unbundled_env { server.start(timeout: 60) }
    yield server
  rescue StandardError
    warn File.read(log)[-3000..] if File.exist?(log)
    raise
  ensure
    server&.stop
  end

  def argv(name, port, pool)
    bind = "tcp://127.0.0.1:#{port}"
    case name
    when "heron" then [RbConfig.ruby, "#{ROOT}/exe/heron", "-e", "production", "-q", "--no-metrics", "-b", bind, "config.ru"]
    when "puma" then [RbConfig.ruby, "-S", "puma", "--no-config", "-t", "5:5", "-e", "production", "-b", bind, "config.ru"]
    when "puma-tuned" then [RbConfig.ruby, "-S", "puma", "--no-config", "-t", "#{pool}:#{pool}", "-e", "production", "-b", bind, "config.ru"]
    when "falcon" then [RbConfig.ruby, "-S", "falcon", "serve", "--count", "1", "-b", "http://127.0.0.1:#{port}", "-c", "config.ru"]
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

  # @return [Array] achieved /s, p50, p99 (ms), errors, server CPU seconds per 1,000 requests
  def attack(server, path, rate)
    json = File.join(@app, "tmp/attack.json")
    cpu = server.tree_cpu_seconds
    args = [server.url(path), "--rate", rate.to_s, "--duration", @seconds.to_s, "--timeout", "30s", "--json", json]
    system(RbConfig.ruby, *ATTACK, *args, chdir: ROOT, out: File::NULL, exception: false)
    r = JSON.parse(File.read(json))
    failed = r.dig("requests", "errors") + r.dig("requests", "sent") - r.dig("requests", "ok")
    ok = [r.dig("requests", "ok"), 1].max
    [r.dig("rate", "achieved").round, *%w[p50 p99].map { |p| r.dig("latency_ms", "corrected", p).round }, failed,
     (1000 * (server.tree_cpu_seconds - cpu) / ok).round(2)]
  end

  # @return [Array] req/s, requests per server CPU-second, p99 (ms), errors
  def wrk(server)
    Bench::Wrk.run(server.url("/posts"), connections: 16, seconds: 3, threads: 1) # warm-up (YJIT off: inline caches, AR)
    cpu = server.tree_cpu_seconds
    r = Bench::Wrk.run(server.url("/posts"), connections: 16, seconds: @seconds, threads: 1, latency: true)
    [r.rps.round, (r.requests / (server.tree_cpu_seconds - cpu)).round, r.p99_ms.round(1), r.errors]
  end

  def loadavg = File.read("/proc/loadavg").split.first(3).join(" ")

  def machine
    cpu = File.read("/proc/cpuinfo")[/model name\s*:\s*(.*)/, 1]
    "#{Etc.nprocessors} CPUs (#{cpu}), #{RUBY_DESCRIPTION}"
  end

  def table(header, rows)
    ["| #{header.join(' | ')} |", "|#{'---|' * header.size}", *rows.map { |row| "| #{row.join(' | ')} |" }].join("\n")
  end

  def markdown
    <<~MD
      # Rails 7.1 on PostgreSQL, production: Heron, Puma, Falcon

      - Date: #{Time.now.utc.strftime('%Y-%m-%d %H:%M UTC')}; machine: #{machine}; load average at start #{@load_before}, at the end #{loadavg}.
      - Command: `bundle exec ruby bench/rails.rb #{@argv_text}`
      - App: bench/rails_app/app_files.rb (a generated-style API app: `pool: <%= ENV.fetch("RAILS_MAX_THREADS") { 5 } %>`, default checkout_timeout, production, eager loading).
      - Servers: Heron `exe/heron -e production -q --no-metrics` (no Heron settings); Puma `--no-config -t 5:5` (as generated);
        puma-tuned `-t #{@tuned}:#{@tuned}` with the pool at #{@tuned}; Falcon `serve --count 1` with fiber isolation (its docs' advice).
      - Open loop rows: `heron attack URL --rate R --duration #{@seconds} --timeout 30s`; latency from each request's due time;
        errors are requests without a 2xx answer. CPU ms per request: the user + system CPU over the run of the
        server's process and its children (Falcon serves from a forked child).

      ## seed 003 in Rails: `/sleep?ms=1000` (no database)

      #{table(['server', 'offered /s', 'achieved /s', 'p50 ms', 'p99 ms', 'errors', 'server CPU ms / request'], @rows[:sleep])}

      ## A DB-bound action: `SELECT pg_sleep(0.05)`, offered at 80% of the pool's capacity

      #{table(['server', 'pool', 'offered /s', 'achieved /s', 'p50 ms', 'p99 ms', 'errors', 'server CPU ms / request'], @rows[:db])}

      ## JSON index of 20 records (`wrk -t1 -c16 -d#{@seconds}s`, closed loop)

      #{table(['server', 'req/s', 'requests per server CPU-second', 'p99 ms', 'errors'], @rows[:json])}
    MD
  end
end

RailsBench.new(ARGV).run if $PROGRAM_NAME == __FILE__
