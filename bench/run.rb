# frozen_string_literal: true

# Heron against Puma, Falcon, Itsi and Iodine, one run, one report.
#
#   bundle exec ruby bench/run.rb                       # full run, about 18 minutes
#   bundle exec ruby bench/run.rb --quick               # smoke run, about 3 minutes
#   bundle exec ruby bench/run.rb --only hello,json --rounds 5 --seconds 10 --no-peers
#   bundle exec ruby bench/run.rb --only hello,json,records --setups "16 per core,256 per core" --rounds 1
#
# Every throughput scenario runs with YJIT off and on (`--yjit off,on`; RUBY_YJIT_ENABLE=1 in the
# server's environment), checked inside each server process: bench/lib/gc_probe.rb is loaded into
# every server (RUBYOPT=-r) and reports RubyVM::YJIT.enabled? with its GC counts, and a run whose
# server does not answer as asked stops the script. The app alone, called in a loop with no
# server (bench/lib/app_cost.rb), is measured the same two ways, so each server's own CPU per
# request is reported.
#
# Scenarios (see bench/README.md):
#   hello    wrk against bench/hello.ru at 16 and 256 connections, unpinned and per core (server
#            on CPU 0, wrk on CPU 1), servers one at a time
#   json     the same against bench/json.ru
#   records  the same against bench/records.ru (30 records serialised per request, ~300 objects)
#   static   wrk at 16 connections against bench/static.ru (Rack::Files): a 4 KiB and a 1 MiB file
#   seed003  `heron attack` at 10 req/s against bench/sleep.ru (1000 ms per request)
#   idle     10,000 idle keep-alive connections against each server in turn: answered count, RSS
#
# Itsi and Iodine are installed by bin/setup-bench-peers into tmp/bench-peers (not the bundle)
# and take part when that works; --no-peers leaves them out.
#
# Writes bench/results/latest.md, seed003-*.json/html and raw wrk output (*.raw, not committed).

require "etc"
require "json"
require "open3"
require "optparse"
require "time"
require "uri"
require "fileutils"
require "tmpdir"
require_relative "lib/server_process"
require_relative "lib/idle_connections"
require_relative "lib/wrk"
require_relative "lib/cpu_stat"
require_relative "lib/clock"
require_relative "lib/report"
require_relative "lib/peers"
require_relative "lib/gc_stat"
require_relative "lib/app_cost"

module Bench
  # Runs the selected scenarios and writes the report.
  class Run
    ROOT = File.expand_path("..", __dir__)
    RESULTS = File.join(ROOT, "bench/results")
    SCENARIOS = %w[hello json records static seed003 idle].freeze
    APPS = { "hello" => "bench/hello.ru", "json" => "bench/json.ru", "records" => "bench/records.ru", "static" => "bench/static.ru" }.freeze
    YJIT_MODES = { "off" => false, "on" => true }.freeze
    SERVERS = %w[heron puma falcon].freeze
    ENV_VARS = { "RACK_ENV" => "production", "APP_ENV" => "production" }.freeze
    NOFILE = 20_000

    def initialize(argv)
      @quick = false
      @only = SCENARIOS
      @rounds = nil
      @idle_count = nil
      @peers = true
      @yjit = YJIT_MODES.keys
      @setups = nil
      shown = argv.empty? ? "" : " #{argv.join(' ')}"
      parse(argv)
      @rounds ||= @quick ? 1 : 3
      @wrk_seconds ||= @quick ? 2 : 4
      @warmup_seconds = 1
      @attack_seconds = 10
      @idle_count ||= @quick ? 1_000 : 10_000
      @report = Report.new(quick: @quick)
      @gc_dir = Dir.mktmpdir("heron-bench-gc")
      @report.argv_shown = shown
    end

    def run
      @report.started
      @peer_home = Peers.gem_home if @peers
      @servers = SERVERS + (@peer_home ? Peers::NAMES : [])
      @report.peers = @peer_home && Peers::NAMES.to_h { |name| [name, Peers.version(@peer_home, name)] }
      APPS.each_key { |scenario| throughput(scenario) if @only.include?(scenario) }
      seed003 if @only.include?("seed003")
      idle if @only.include?("idle")
      @report.finished
      FileUtils.rm_rf(@gc_dir)
      path = File.join(RESULTS, "latest.md")
      File.write(path, @report.markdown)
      puts File.read(path)
      puts "\nwrote #{path}"
    end

    private

    def parse(argv)
      OptionParser.new do |o|
        o.banner = "Usage: bundle exec ruby bench/run.rb [--quick] [--only hello,seed003,idle]"
        o.on("--quick", "short smoke run (1 round, 3 s wrk, 1,000 idle connections)") { @quick = true }
        o.on("--only LIST", Array, "scenarios to run (#{SCENARIOS.join(',')})") do |list|
          bad = list - SCENARIOS
          raise OptionParser::InvalidArgument, bad.join(",") if bad.any?

          @only = list
        end
        o.on("--rounds N", Integer, "rounds per server for hello, json and seed003 (default 3, quick 1)") { |n| @rounds = n.clamp(1, 10) }
        o.on("--seconds N", Integer, "seconds per wrk run (default 4, quick 2)") { |n| @wrk_seconds = n.clamp(1, 60) }
        o.on("--[no-]peers", "include Itsi and Iodine (bin/setup-bench-peers; default on)") { |on| @peers = on }
        o.on("--idle-connections N", Integer, "idle scenario size (default 10000)") { |n| @idle_count = n.clamp(1, 15_000) }
        o.on("--yjit LIST", Array, "YJIT modes for the throughput rows (off,on; default both)") do |list|
          raise OptionParser::InvalidArgument, list.join(",") unless (list - YJIT_MODES.keys).empty? && list.any?

          @yjit = list
        end
        o.on("--setups LIST", Array, "throughput set-ups (#{SETUPS.map(&:first).join(',')}; default all)") do |list|
          raise OptionParser::InvalidArgument, list.join(",") unless (list - SETUPS.map(&:first)).empty? && list.any?

          @setups = list
        end
      end.parse!(argv)
    end

    # --- servers ---------------------------------------------------------------------------

    # `blocking`: the app blocks (the sleep endpoint), for the peers' set-up (see Peers).
    # `extra`: more options by server name.
    def server_argv(name, port, app, puma_threads: nil, extra: {}, blocking: false)
      return Peers.argv(name, @peer_home, port, File.join(ROOT, app), blocking: blocking, extra: extra.fetch(name, [])) if Peers::NAMES.include?(name)
      case name
      when "heron"
        %W[bundle exec exe/heron -b tcp://127.0.0.1:#{port} -e production -q] + extra.fetch(name, []) + [app]
      when "puma"
        threads = puma_threads ? ["-t", puma_threads] : []
        %W[bundle exec puma --no-config -b tcp://127.0.0.1:#{port} -e production] + threads + [app]
      when "falcon"
        %W[bundle exec falcon serve --threaded --count 1 -b http://127.0.0.1:#{port} -c #{app}]
      end
    end

    # `yjit`: true or false to start the server with YJIT on or off (checked in the server through
    # the GC probe), nil to leave Ruby's default.
    def with_server(name, app, tag, yjit: nil, **options)
      port = ServerProcess.free_port
      argv = server_argv(name, port, app, **options.except(:rlimit_nofile))
      log = File.join(RESULTS, "#{tag}-#{name}.server.raw")
      peer = Peers::NAMES.include?(name)
      @gc = GCStat.new(@gc_dir) # every server's GC counts per run (bench/lib/gc_probe.rb)
      server = ServerProcess.new(argv, port: port, log: log, chdir: peer ? Dir.tmpdir : ROOT, # Itsi writes itsi.pid there
                                       env: server_env(name, peer, yjit),
                                       rlimit_nofile: options[:rlimit_nofile])
      say "starting #{name}: #{argv.join(' ')}"
      server.start
      yield server
    ensure
      server&.stop
    end

    # The server's command line with its port (Heron, Puma, Falcon, Itsi: host:port; Iodine: -p)
    # shown as PORT.
    def shown(server)
      server.argv.join(" ").sub(/:\d+\b/, ":PORT").sub(/ -p \d+ /, " -p PORT ")
    end

    def server_env(_name, peer, yjit)
      env = ENV_VARS.merge(yjit ? { "RUBY_YJIT_ENABLE" => "1" } : {})
      # A peer runs outside the bundle: only the probe goes into its RUBYOPT.
      peer ? env.merge(Peers.env(@peer_home)).merge(@gc.env.merge("RUBYOPT" => "-r#{GCStat::PROBE}")) : env.merge(@gc.env)
    end

    # --- hello world and JSON -------------------------------------------------------------

    # wrk set-ups: [label, connections, wrk threads, pinned?, path]. The pinned (per-core) ones put
    # the server on CPU 0 and a one-thread wrk on CPU 1, so neither preempts the other.
    SETUPS = [
      ["16", 16, 2, false, "/"],
      ["256", 256, 2, false, "/"],
      ["16 per core", 16, 1, true, "/"],
      ["256 per core", 256, 1, true, "/"]
    ].freeze
    # The static row: one small and one large file (bench/static.ru), 16 connections.
    STATIC_SETUPS = [
      ["4 KiB, 16", 16, 2, false, "/small.bin"],
      ["1 MiB, 16", 16, 2, false, "/big.bin"]
    ].freeze

    # Servers take turns within each round (every server is restarted each round), so a busy
    # spell on the shared machine hits all of them rather than one.
    # Static files run once (YJIT does not touch sendfile); the other scenarios once per YJIT mode.
    def throughput(scenario)
      @report.wrk_version = Wrk.version
      modes = scenario == "static" ? [nil] : @yjit
      modes.each { |mode| throughput_mode(scenario, mode) }
    end

    def throughput_mode(scenario, mode)
      yjit = mode && YJIT_MODES.fetch(mode)
      samples = Hash.new { |h, k| h[k] = [] }
      @rounds.times do |round|
        @servers.each do |name|
          with_server(name, APPS.fetch(scenario), scenario, yjit: yjit) { |server| run_setups(scenario, mode, name, server, round, samples) }
        end
      end
      app_cost = mode && AppCost.measure(APPS.fetch(scenario), yjit: yjit, cpu: 0)
      @report.throughput(scenario, samples, servers: @servers, rounds: @rounds, seconds: @wrk_seconds, yjit: mode, app_cost: app_cost,
                                            warmup: @warmup_seconds, setups: setups(scenario).map(&:first))
    end

    def setups(scenario)
      return STATIC_SETUPS if scenario == "static"

      @setups ? SETUPS.select { |setup| @setups.include?(setup.first) } : SETUPS
    end

    def run_setups(scenario, mode, name, server, round, samples)
      tag = mode ? "#{scenario}-yjit-#{mode}" : scenario
      @report.command(name, tag, "#{mode == 'on' ? 'RUBY_YJIT_ENABLE=1 ' : ''}#{shown(server)}")
      setups(scenario).each { |setup| Wrk.run(server.url(setup.last), connections: 16, seconds: @warmup_seconds) } # warm-up
      setups(scenario).each do |label, conns, threads, pinned, path|
        server.pin(0) if pinned
        raw = File.join(RESULTS, "#{tag}-#{name}-#{label.tr(' ,', '-').squeeze('-')}-r#{round + 1}.raw")
        gc_before = @gc.sample(server.pid)
        result = Wrk.run(server.url(path), connections: conns, threads: threads, seconds: @wrk_seconds,
                                     latency: true, cpu: pinned ? 1 : nil, raw: raw, server: server)
        result.gc = GCStat.delta(gc_before, @gc.sample(server.pid))
        check_yjit(name, mode, result.gc)
        say format("  %s round %d %-6s %-12s %10.0f req/s %8.0f req/cpu-s  p99 %8.2f ms  errors %d  load %s%s", tag,
                   round + 1, name, label, result.rps, result.requests.fdiv(result.server_cpu_s), result.p99_ms, result.errors,
                   result.load_before, result.gc && format("  GC %.1f%% of CPU, %d major", 100 * result.gc.share(result.server_cpu_s), result.gc.major))
        samples[[name, label]] << result
      end
    end

    # Stops the run when a server's YJIT is not what the row says (or the probe did not answer).
    def check_yjit(name, mode, gc)
      return unless mode
      raise "#{name} did not answer the GC probe: YJIT #{mode} not checked" unless gc
      raise "#{name} runs with YJIT #{gc.yjit ? 'on' : 'off'}, the row is YJIT #{mode}" unless gc.yjit == YJIT_MODES.fetch(mode)
    end

    # --- seed 003 --------------------------------------------------------------------------

    def seed003
      runs = Hash.new { |h, k| h[k] = [] }
      Dir.mktmpdir("seed003", RESULTS) do |dir|
        @rounds.times do |round|
          @servers.each { |name| runs[name] << seed003_round(name, round + 1, dir) }
        end
        runs.each do |name, list|
          chosen = list.min_by { |run| (run[:p99] - median(list.map { |r| r[:p99] })).abs }
          %w[json html].each { |ext| FileUtils.cp(chosen[ext.to_sym], File.join(RESULTS, "seed003-#{name}.#{ext}")) }
          chosen[:chosen] = true
        end
      end
      compare = %w[bundle exec exe/heron attack --compare bench/results/seed003-puma.json
                   bench/results/seed003-heron.json --html bench/results/seed003-compare.html]
      out, status = Open3.capture2e(*compare, chdir: ROOT)
      File.write(File.join(RESULTS, "seed003-compare.raw"), out)
      @report.compare_command = compare.join(" ")
      @report.compare_ok = status.success?
      @report.seed003(runs)
    end

    # One attack run against a freshly started server; files go to `dir` until a round is chosen.
    def seed003_round(name, round, dir)
      threads = name == "puma" ? "5:5" : nil
      with_server(name, "bench/sleep.ru", "seed003", puma_threads: threads, blocking: true) do |server|
        @report.command(name, "seed003", shown(server))
        warm(server.url("/?ms=1"))
        files = { json: File.join(dir, "#{name}-#{round}.json"), html: File.join(dir, "#{name}-#{round}.html") }
        attack = %W[bundle exec exe/heron attack #{server.url} --rate 10 --duration #{@attack_seconds}
                    --json #{files[:json]} --html #{files[:html]}]
        shown = attack.join(" ").sub(%r{:\d+/}, ":PORT/").gsub("#{dir}/#{name}-#{round}", "bench/results/seed003-#{name}")
        @report.command(name, "seed003-attack", shown)
        (out, status), steal = CpuStat.measure { Open3.capture2e(*attack, chdir: ROOT) }
        File.write(File.join(RESULTS, "seed003-#{name}-r#{round}.raw"), out)
        raise "heron attack failed against #{name} (exit #{status.exitstatus}):\n#{out}" unless status.success?

        data = JSON.parse(File.read(files[:json]))
        p99 = data.dig("latency_ms", "corrected", "p99")
        say format("  round %d %-6s p50 %8.1f ms  p99 %8.1f ms  steal %.0f%%", round, name,
                   data.dig("latency_ms", "corrected", "p50"), p99, steal)
        files.merge(data: data, p99: p99, steal: steal, round: round)
      end
    end

    def median(values)
      sorted = values.sort
      sorted[sorted.size / 2]
    end

    def warm(url)
      uri = URI(url)
      Socket.tcp(uri.host, uri.port, connect_timeout: 5) do |s|
        s.write("GET #{uri.request_uri} HTTP/1.1\r\nHost: #{uri.host}\r\nConnection: close\r\n\r\n")
        s.read
      end
    end

    # --- idle keep-alive connections -------------------------------------------------------

    # Limits that would cut the run short, raised: Heron's keep-alive timeout (20 s) and connection
    # cap (4096), Iodine's keep-alive timeout (40 s), Itsi's wait for the next request head (2 s)
    # and its queue of requests (30 per thread; bench/itsi_idle.rb). Puma (65 s) and Falcon keep
    # their defaults.
    IDLE_EXTRA = {
      "heron" => %w[--max-connections 12000 --keepalive-timeout 120 --shutdown-timeout 5],
      "iodine" => %w[-k 120],
      "itsi" => ["-C", File.join(ROOT, "bench/itsi_idle.rb")]
    }.freeze
    # Seconds a server gets to answer the connections before the rest are not tried: one that
    # answers a few at a time (Puma's thread pool) must not hold the run for minutes.
    IDLE_OPEN_LIMIT = 60
    IDLE_BATCH_TIMEOUT = 10

    # Every server in turn, alone, gets the idle connections.
    def idle
      Process.setrlimit(:NOFILE, NOFILE, NOFILE)
      @report.idle(@servers.to_h { |name| [name, idle_server(name)] }, open_limit: IDLE_OPEN_LIMIT)
    end

    def idle_server(name)
      with_server(name, "bench/hello.ru", "idle", extra: IDLE_EXTRA, rlimit_nofile: [NOFILE, NOFILE]) do |server|
        @report.command(name, "idle", "#{shown(server)}  (rlimit_nofile 20000)")
        pool = IdleConnections.new("127.0.0.1", server.port, batch_timeout: IDLE_BATCH_TIMEOUT)
        warm_answered = pool.open(100, within: IDLE_BATCH_TIMEOUT)
        pool.close
        sleep 1
        idle_measure(name, server, pool, { count: @idle_count, warm: warm_answered, rss_before_kb: server.tree_rss_kb, limits: kernel_limits })
      ensure
        pool&.close
      end
    end

    def idle_measure(name, server, pool, result)
      result[:open_s] = Clock.elapsed { result[:answered] = pool.open(@idle_count, within: IDLE_OPEN_LIMIT) }
      sleep 2
      result[:rss_after_kb] = server.tree_rss_kb
      result[:open_after] = pool.size
      say "  #{name}: #{result[:answered]}/#{@idle_count} answered in #{result[:open_s].round(2)} s, RSS #{result[:rss_before_kb]} -> #{result[:rss_after_kb]} KiB"
      sleep 3 # idle: nothing sent for a few seconds
      result[:again_s] = Clock.elapsed { result[:answered_again] = pool.request_all }
      result[:rss_after_second_kb] = server.tree_rss_kb
      result[:failures] = pool.failures.dup
      say "  #{name}: second request: #{result[:answered_again]} answered; RSS #{result[:rss_after_second_kb]} KiB; failures #{result[:failures]}"
      result
    end

    def kernel_limits
      {
        somaxconn: File.read("/proc/sys/net/core/somaxconn").strip,
        port_range: File.read("/proc/sys/net/ipv4/ip_local_port_range").split.join("–"),
        client_nofile: Process.getrlimit(:NOFILE).join("/")
      }
    end

    def say(line)
      warn line
    end
  end
end

Bench::Run.new(ARGV).run if $PROGRAM_NAME == __FILE__
