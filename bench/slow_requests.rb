# frozen_string_literal: true

# Thousands of concurrent slow requests in one Heron process: `bench/sleep.ru` sleeps 1 s per
# request, `heron attack` offers R requests/s open loop for D seconds, so about R requests (and,
# with one connection per request in flight, R connections) are in flight at once. Each row runs
# on a freshly started server and reports the offered and achieved rate, latency from each
# request's due time (p50/p99/max), errors, the generator's own lateness and CPU, and the
# server's CPU share, peak RSS, peak open descriptors and garbage collections (count, minor/major,
# time, longest pause, the minor ones with 1,000+ requests in flight, objects allocated:
# bench/lib/gc_report.rb, loaded into the server through RUBYOPT).
#
#   bundle exec ruby bench/slow_requests.rb [--rates 1000,2000,5000] [--duration 10] [--processes 2]
#     [--max-connections 12000] [--cross-check 5000] [--default-cap 5000] [--server-env K=V,...]
#     [--attack-env K=V,...] [--out FILE]
#
# --cross-check R adds a row measured with h2load at R/s: h2load opens R connections per second
# open loop (`-r`, one request on each), so it also pays a connect and a close per request;
# its latency is from each request's send (not from when the connection was due), taken from its
# per-request log. httperf cannot: it uses select(2) and stops at 1,024 descriptors.
# --default-cap R adds a row at R/s against a server left at the default max_connections (4,096).
# --gc-init-slots N adds a row at the highest rate with the server started with
# RUBY_GC_HEAP_INIT_SLOTS=N (a heap big enough from the start, so that opening thousands of
# connections does not set off a major collection each time the heap fills).
# --server-env K=V,... adds a row at the highest rate with those variables in the server's
# environment (Ruby's GC settings, which it reads only at boot: see docs/deployment.md).
# HERON_BENCH_SERVER_DIR=DIR measures the server of another checkout (its exe/heron, lib and
# Gemfile; bench/sleep.ru must exist there), to compare two builds under the same generator.
# --attack-env K=V,... runs every heron attack with those variables (the generator's own GC
# settings: its lateness is part of every latency it reports).

require "json"
require "optparse"
require "rbconfig"
require "tmpdir"
require "etc"
require_relative "lib/options"
require_relative "lib/report_file"
require_relative "lib/server_process"
require_relative "lib/clock"
require_relative "lib/heron_attack"
require_relative "lib/machine"
require_relative "lib/proc_fs"

# Runs the rows and writes the markdown report.
class SlowRequests
  ROOT = File.expand_path("..", __dir__)
  SERVER = %w[bundle exec exe/heron -q -e production --control-bind tcp://127.0.0.1:0].freeze
  # The checkout whose server is measured (HERON_BENCH_SERVER_DIR: another build, e.g. a worktree
  # of an older commit, with its own Gemfile), so two builds meet the same load generator.
  SERVER_DIR = File.expand_path(ENV.fetch("HERON_BENCH_SERVER_DIR", ROOT))

  def initialize(argv)
    @argv_text = argv.join(" ")
    @rates = [1000, 2000, 5000]
    @duration = 10
    @processes = 2
    @max_connections = 12_000
    @out = File.join(ROOT, "bench/results/slow_requests.md")
    parse(argv)
    @rows = []
  end

  def run
    @load_before = loadavg
    Dir.mktmpdir do |dir|
      @rates.each { |rate| row("heron attack", rate, dir) { |url| attack(url, rate, dir) } }
      row("heron attack, default max_connections", @default_cap, dir, cap: nil) { |url| attack(url, @default_cap, dir) } if @default_cap
      gc_row(dir, "RUBY_GC_HEAP_INIT_SLOTS" => @gc_init_slots.to_s) if @gc_init_slots
      gc_row(dir, @server_env) if @server_env
      row("h2load (connection per request)", @cross_check, dir) { |url| h2load(url, @cross_check, dir) } if @cross_check
    end
    Bench::ReportFile.publish(@out, markdown)
  end

  private

  def parse(argv)
    OptionParser.new do |o|
      Bench::Options.rates(o, @rates) { |rates| @rates = rates }
      o.on("--duration SECONDS", Integer, "seconds per row (default 10)") { |v| @duration = v }
      o.on("--processes N", Integer, "heron attack --processes (default 2)") { |v| @processes = v }
      o.on("--max-connections N", Integer, "the server's max_connections (default 12000)") { |v| @max_connections = v }
      o.on("--cross-check RATE", Integer, "add an h2load row at this rate") { |v| @cross_check = v }
      o.on("--default-cap RATE", Integer, "add a row at this rate with the default max_connections") { |v| @default_cap = v }
      o.on("--gc-init-slots N", Integer, "add a row with the server's RUBY_GC_HEAP_INIT_SLOTS=N") { |v| @gc_init_slots = v }
      o.on("--server-env LIST", Array, "add a row with these K=V in the server's environment") { |v| @server_env = pairs(v) }
      o.on("--attack-env LIST", Array, "run heron attack with these K=V in its environment") { |v| @attack_env = pairs(v) }
      Bench::Options.out(o) { |path| @out = path }
    end.parse!(argv)
  end

  def pairs(list) = list.to_h { |pair| pair.split("=", 2) }

  def gc_row(dir, env)
    rate = @rates.max
    row("heron attack, server #{env.map { |k, v| "#{k}=#{v}" }.join(' ')}", rate, dir, env: env) { |url| attack(url, rate, dir) }
  end

  # Starts a server, runs the block against it while sampling the server, and records a row.
  def row(tool, rate, dir, cap: @max_connections, env: {})
    server = start_server(dir, cap, env)
    samples = []
    sampler = Thread.new do
      loop do
        samples << sample(server)
        sleep(0.25)
      end
    end
    cpu = server.cpu_seconds
    started = Bench::Clock.now
    result = yield server.url("/?ms=1000")
    cpu_share = 100 * (server.cpu_seconds - cpu) / (Bench::Clock.now - started)
    sampler.kill
    @rows << [tool, cap || "4096 (default)", rate, *result, cpu_share.round(1), *peaks(samples)]
    server.stop
    gc_columns(dir)
    puts @rows.last.join(" | ")
  ensure
    server&.stop
  end

  # Appends the server's GCs (written by bench/lib/gc_report.rb as it exited) to the last row.
  def gc_columns(dir)
    gc = JSON.parse(File.read(File.join(dir, "gc.json")))
    @rows.last.push("#{gc['count']} (#{gc['minor']}/#{gc['major']})", gc["time_ms"], gc["max_pause_ms"], gc["median_minor_pause_ms"] || "-",
                    loaded_minors(gc["loaded_minors"]), gc["allocated"] || "-")
  rescue SystemCallError, JSON::ParserError
    @rows.last.push("-", "-", "-", "-", "-", "-")
  end

  def loaded_minors(loaded)
    return "0" unless loaded
    "#{loaded['count']}: #{loaded['median_ms']} / #{loaded['max_ms']} (#{loaded['median_in_flight']})"
  end

  def start_server(dir, cap, env)
    port = Bench::ServerProcess.free_port
    argv = SERVER + ["-b", "tcp://127.0.0.1:#{port}"] + (cap ? ["--max-connections", cap.to_s] : []) + ["bench/sleep.ru"]
    @server_command = argv.join(" ").sub(port.to_s, "PORT") if cap
    gc = { "RUBYOPT" => "#{ENV.fetch('RUBYOPT', '')} -r#{File.join(__dir__, 'lib/gc_report.rb')}", "HERON_BENCH_GC_OUT" => File.join(dir, "gc.json") }
    File.delete(gc["HERON_BENCH_GC_OUT"]) if File.exist?(gc["HERON_BENCH_GC_OUT"])
    gc["BUNDLE_GEMFILE"] = File.join(SERVER_DIR, "Gemfile")
    Bench::ServerProcess.new(argv, port: port, log: File.join(dir, "server.log"), chdir: SERVER_DIR, env: gc.merge(env)).start.tap do |server|
      @start_rss ||= server.rss_kb
    end
  end

  def sample(server)
    [server.rss_kb, Bench::ProcFS.open_fds(server.pid)]
  rescue SystemCallError
    [0, 0]
  end

  def peaks(samples)
    [(samples.map(&:first).max.to_i / 1024.0).round, samples.map(&:last).max.to_i]
  end

  # @return [Array] achieved, p50, p99, max (ms), errors, lateness p50/p99 (ms), generator µs/request, its GCs
  def attack(url, rate, dir)
    json = File.join(dir, "attack-#{rate}.json")
    @attack_command = "#{@attack_env&.map { |k, v| "#{k}=#{v} " }&.join}heron attack URL --rate R --duration #{@duration} " \
                      "--processes #{@processes} --json FILE"
    args = [url, "--rate", rate.to_s, "--duration", @duration.to_s, "--processes", @processes.to_s]
    r = Bench::HeronAttack.report(args, json: json, env: @attack_env || {})
    failed = r.dig("requests", "errors") + r.dig("requests", "sent") - r.dig("requests", "ok")
    [r.dig("rate", "achieved").round, *%w[p50 p99 max].map { |p| r.dig("latency_ms", "corrected", p).round }, failed,
     r.dig("lateness_ms", "p50"), r.dig("lateness_ms", "p99").round(1), r.dig("generator", "cpu_us_per_request"),
     "#{r.dig('generator', 'gc_count')} (#{r.dig('generator', 'gc_ms')} ms)"]
  end

  def h2load(url, rate, dir)
    log = File.join(dir, "h2load.log")
    period = 10 # connections are started every 100 ms, rate/10 at a time
    @h2load_command = "h2load --h1 -r #{rate / period} --rate-period 100ms -c #{rate * @duration} -n #{rate * @duration} " \
                      "-T 30 -N 30 --log-file FILE URL"
    argv = ["h2load", "--h1", "-r", (rate / period).to_s, "--rate-period", "100ms", "-c", (rate * @duration).to_s,
            "-n", (rate * @duration).to_s, "-T", "30", "-N", "30", "--log-file", log, url]
    output = IO.popen(argv, err: %i[child out], &:read)
    h2load_row(File.readlines(log).map { |line| line.split.map(&:to_i) }, output)
  end

  def h2load_row(rows, output)
    durations = rows.map(&:last).sort
    starts = rows.map(&:first).minmax
    at = ->(p) { (durations[((durations.size - 1) * p).round] / 1000.0).round }
    failed = output[/(\d+) failed/, 1].to_i + rows.count { |_, status, _| status != 200 }
    [((rows.size - 1) * 1e6 / (starts[1] - starts[0])).round, at.call(0.5), at.call(0.99), at.call(1.0), failed, "-", "-", "-", "-"]
  end

  def loadavg = Bench::Machine.load

  def markdown
    header = "| tool | max_connections | offered /s | achieved /s | p50 ms | p99 ms | max ms | errors | " \
             "generator lateness p50 ms | lateness p99 ms | generator CPU µs/request | generator GCs (time) | server CPU % | server peak RSS MB | server peak fds | " \
             "server GCs (minor/major) | server GC ms | longest GC pause ms | median minor GC pause ms | " \
             "minor GCs with ≥ 1,000 in flight: median / longest pause ms (median in flight) | server objects allocated |"
    <<~MD
      # Slow requests: 1 s sleeps in one Heron process

      - Date: #{Time.now.utc.strftime('%Y-%m-%d %H:%M UTC')}
      - Machine: #{Bench::Machine.summary}; load average (1/5/15 min) at start #{@load_before}, at the end #{loadavg}.
        The server and the load generator share the machine; other jobs were running.
      - Command: `#{"HERON_BENCH_SERVER_DIR=#{SERVER_DIR} " unless SERVER_DIR == ROOT}bundle exec ruby bench/slow_requests.rb #{@argv_text}`
      - Server (fresh for each row): `#{@server_command}` (`bench/sleep.ru`: `sleep 1`, then "ok"); RSS after start #{(@start_rss.to_i / 1024.0).round} MB.
      - heron attack row: `#{@attack_command}` (URL `/?ms=1000`); latency from each request's due time.
      #{"- h2load row: `#{@h2load_command}`: connections opened open loop, one request each; latency from the send." if @h2load_command}
      - errors: requests without a response plus non-2xx responses. Server CPU %: of one core, over the run.
        Server GCs: over the server's life (boot, the run, the stop), from `GC.stat` and `GC::Profiler` at its exit;
        the minor ones with 1,000 requests or more in flight (the server's count when a thread that
        looks every 2 ms saw the collection) are those that pause a loaded server. Objects allocated: over its life.
        Every request in flight is a connection with a fiber sleeping in the app, so the fibers
        each collection marks number about the offered rate (1 s sleeps), as do the peak fds.

      #{header}
      |#{'---|' * 21}
      #{@rows.map { |row| "| #{row.join(' | ')} |" }.join("\n")}
    MD
  end
end

SlowRequests.new(ARGV).run if $PROGRAM_NAME == __FILE__
