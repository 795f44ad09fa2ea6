# frozen_string_literal: true

# What a request costs the server over HTTP/2 (cleartext, prior knowledge: h2c) against the same
# request over HTTP/1.1, for Heron and for Falcon, with one client (h2load) for both protocols so
# that only the protocol differs. Server CPU is user + system time of the server's process tree
# (/proc/PID/stat) over the measured run, divided by the requests answered with a 2xx.
#
#   bundle exec ruby bench/http2_cost.rb [--rates 2000,5000] [--duration 10] [--servers heron,falcon]
#     [--only hello,sleep-conn,sleep-keepalive] [--rounds 1]
#
# Rows (each on a freshly started server):
#   hello            bench/hello.ru closed loop, h2load -c 16 -m 1 (and h2c -m 10): per-request cost
#                    with keep-alive connections, nothing in flight but the request.
#   sleep-conn       bench/sleep.ru (1 s) at R/s, one new connection per request (h2load -r, as
#                    bench/slow_requests.rb's cross-check): the HTTP/2 connection set-up (preface,
#                    SETTINGS, HPACK tables) is paid once per request.
#   sleep-keepalive  bench/sleep.ru at R/s on kept-alive connections (h2load --timing-script-file):
#                    h2c on 100 connections of up to 100 streams; HTTP/1.1 on 2R connections, a
#                    request every 2 s each.
# Latency (p50/p99, ms) is from each request's send, from h2load's per-request log.

require "optparse"
require "tmpdir"
require "etc"
require_relative "lib/servers"
require_relative "lib/clock"
require_relative "lib/proc_fs"
require_relative "lib/results_page"

module Bench
  # Runs the rows and prints the table.
  class HTTP2Cost
    ROOT = File.expand_path("..", __dir__)
    PATH = "/?ms=1000"
    H2_CONNECTIONS = 100

    def initialize(argv)
      @rates = [2000, 5000]
      @duration = 10
      @servers = %w[heron falcon]
      @only = %w[hello sleep-conn sleep-keepalive]
      @rounds = 1
      OptionParser.new do |o|
        o.on("--rates LIST", Array, "offered rates of 1 s sleeps (default 2000,5000)") { |v| @rates = v.map { |r| Integer(r) } }
        o.on("--duration SECONDS", Integer, "seconds per row (default 10)") { |v| @duration = v }
        o.on("--servers LIST", Array, "heron,falcon") { |v| @servers = v }
        o.on("--only LIST", Array, "hello,sleep-conn,sleep-keepalive") { |v| @only = v }
        o.on("--rounds N", Integer, "rounds per row; the median is shown (default 1)") { |v| @rounds = v }
      end.parse!(argv)
      @rows = []
    end

    def run
      puts "#{Etc.nprocessors} CPUs (#{ProcFS.cpu_model}), #{RUBY_DESCRIPTION}"
      puts "| server | workload | protocol | offered /s | answered 2xx | errors | server CPU s | server CPU µs/request | h2 ÷ h1 | p50 ms | p99 ms |"
      puts "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
      Dir.mktmpdir("heron-http2-cost") do |dir|
        @dir = dir
        @servers.each { |server| workloads.each { |name, rate, runs| pair(server, name, rate, runs) } }
      end
      puts "", "h2load lines: #{@commands.uniq.join('; ')}"
    end

    private

    # [workload, rate, [[protocol, h2load arguments]]]
    def workloads
      list = []
      list << ["hello", nil, [["h1", %w[--h1 -c 16 -m 1]], ["h2c", %w[-c 16 -m 1]], ["h2c -m 10", %w[-c 16 -m 10]]]] if @only.include?("hello")
      @rates.each do |rate|
        list << ["sleep-conn", rate, [["h1", ["--h1", *per_connection(rate)]], ["h2c", per_connection(rate)]]] if @only.include?("sleep-conn")
        list << ["sleep-keepalive", rate, [["h1", ["--h1", *scripted(rate, rate * 2)]], ["h2c", scripted(rate, H2_CONNECTIONS)]]] if @only.include?("sleep-keepalive")
      end
      list
    end

    def per_connection(rate)
      count = rate * @duration
      ["-r", (rate / 10).to_s, "--rate-period", "100ms", "-c", count.to_s, "-n", count.to_s, "-T", "30", "-N", "30"]
    end

    # Each client sends a request every clients/rate seconds, from a script (written once the
    # server's port is known: see #script).
    def scripted(rate, clients)
      per_client = (rate * @duration) / clients
      ["--timing-script-file", "#{clients * 1000.0 / rate}x#{per_client}", "-c", clients.to_s, "-m", "100",
       "-n", (per_client * clients).to_s, "-T", "30", "-N", "30"]
    end

    # Writes the timing script "INTERVALxCOUNT" stands for: COUNT lines INTERVAL ms apart.
    def script(spec, port)
      interval, count = spec.split("x")
      path = File.join(@dir, "script.tsv")
      File.write(path, Array.new(Integer(count)) { |i| format("%.3f\thttp://127.0.0.1:%d%s\n", i * Float(interval), port, PATH) }.join)
      path
    end

    def pair(server, workload, rate, runs)
      h1 = nil
      runs.each do |protocol, args|
        results = Array.new(@rounds) { measure(server, workload, args) }
        cpu, answered, errors, p50, p99 = results.sort_by { |r| r[0] / [r[1], 1].max }[results.size / 2]
        per = cpu * 1e6 / [answered, 1].max
        h1 ||= per
        puts "| #{server} | #{workload} | #{protocol} | #{rate || 'closed loop'} | #{answered} | #{errors} | #{cpu.round(2)} | " \
             "#{per.round} | #{(per / h1).round(2)} | #{p50} | #{p99} |"
      end
    end

    # @return [Array] server CPU seconds, 2xx answered, errors, p50 ms, p99 ms
    def measure(server, workload, args)
      app = workload == "hello" ? "bench/hello.ru" : "bench/sleep.ru"
      port = ServerProcess.free_port
      extra = server == "heron" ? %w[--max-connections 12000] : []
      process = ServerProcess.new(Servers.argv(server, port, app, extra), port: port, log: File.join(@dir, "server.log"),
                                                                         chdir: ROOT).start
      h2load(process, workload, args, port)
    ensure
      process&.stop
    end

    def h2load(process, workload, args, port)
      log = File.join(@dir, "h2load.log")
      File.delete(log) if File.exist?(log)
      args = (workload == "hello" ? ["-D", @duration.to_s] : ["--log-file", log]) + args
      (@commands ||= []) << "h2load #{args.join(' ').sub(@dir, 'DIR').sub(/--timing-script-file \S+/, "--timing-script-file SCRIPT")} URL"
      index = args.index("--timing-script-file")
      args[index + 1] = script(args[index + 1], port) if index
      cpu = process.tree_cpu_seconds
      output = IO.popen(["h2load", *args, "http://127.0.0.1:#{port}#{workload == 'hello' ? '/' : PATH}"], err: %i[child out], &:read)
      cpu = process.tree_cpu_seconds - cpu
      answered = output[/status codes: (\d+) 2xx/, 1].to_i
      errors = output[/(\d+) failed/, 1].to_i + output[/(\d+) errored/, 1].to_i
      [cpu, answered, errors, *latencies(log)]
    end

    def latencies(log)
      return %w[- -] unless File.exist?(log)
      durations = File.foreach(log).map { |line| line.split[2].to_i }.sort
      return %w[- -] if durations.empty?
      [0.5, 0.99].map { |p| (durations[((durations.size - 1) * p).round] / 1000.0).round }
    end
  end
end

if $PROGRAM_NAME == __FILE__
  Bench::ResultsPage.capture("http2_cost.md")
  Bench::HTTP2Cost.new(ARGV).run
end
