# frozen_string_literal: true

# Does Heron's cost per request hold as connections grow? One Heron process pinned to CPU 0, the
# load tool pinned to CPU 1 (as bench/run.rb's "per core" set-ups), the connection counts taking
# turns within each round against the same process. Reports per run: req/s, wrk's p99, requests per server
# CPU-second, the load tool's own CPU use (a tool at 100% of its CPU is the bottleneck, not the
# server), the server's GC share and major GCs (bench/lib/gc_probe.rb), and per round the ratio
# of the largest connection count to the smallest.
#
#   bundle exec ruby bench/connections_scaling.rb [--app bench/json.ru] [--rounds 5] [--seconds 4]
#     [--connections 16,256] [--tool wrk|h2load] [--threads 1] [--heron "--keepalive-park-after 1"]
#
# Wrap it in `flock /tmp/heron-bench.lock` on a shared machine. Not a test: numbers depend on the
# machine. Needs wrk (or h2load) and taskset.
require "optparse"
require "tmpdir"
require "open3"
require_relative "lib/server_process"
require_relative "lib/wrk"
require_relative "lib/gc_stat"
require_relative "lib/results_page"

module Bench
  # See the file's comment.
  class ConnectionsScaling
    ROOT = File.expand_path("..", __dir__)
    Run = Struct.new(:connections, :requests, :rps, :p99_ms, :server_cpu_s, :tool_cpu_share, :gc, keyword_init: true)

    def initialize(argv)
      @app = "bench/json.ru"
      @rounds = 5
      @seconds = 4
      @connections = [16, 256]
      @tool = "wrk"
      @threads = 1
      @heron = []
      parse(argv)
    end

    def run
      Dir.mktmpdir("heron-scaling") do |dir|
        @gc = GCStat.new(dir)
        server = start(dir)
        begin
          tool(server, 16, 1) # warm-up
          ratios = Array.new(@rounds) { |round| round(server, round + 1) }
          summary(ratios)
        ensure
          server.stop
        end
      end
    end

    private

    def parse(argv)
      OptionParser.new do |o|
        o.on("--app PATH", "rackup file (default bench/json.ru)") { |v| @app = v }
        o.on("--rounds N", Integer) { |v| @rounds = v }
        o.on("--seconds N", Integer, "seconds per run (default 4)") { |v| @seconds = v }
        o.on("--connections LIST", Array, "connection counts (default 16,256)") { |v| @connections = v.map { |c| Integer(c) } }
        o.on("--tool NAME", %w[wrk h2load], "load tool (default wrk)") { |v| @tool = v }
        o.on("--threads N", Integer, "load tool threads, all on CPU 1 (default 1)") { |v| @threads = v }
        o.on("--heron FLAGS", "extra heron flags") { |v| @heron = v.split }
      end.parse!(argv)
    end

    def start(dir)
      port = ServerProcess.free_port
      argv = %W[bundle exec exe/heron -b tcp://127.0.0.1:#{port} -e production -q] + @heron + [@app]
      puts "server: #{argv.join(' ')} (pinned to CPU 0); #{@tool} -t#{@threads} on CPU 1; #{@seconds} s per run"
      server = ServerProcess.new(argv, port: port, log: File.join(dir, "server.log"), chdir: ROOT,
                                       env: { "RACK_ENV" => "production" }.merge(@gc.env))
      server.start
      server.pin(0)
      server
    end

    def round(server, number)
      runs = @connections.map { |count| measure(server, count) }
      runs.each do |r|
        puts format("round %d c=%-4d %8.0f req/s  p99 %7s ms %8.0f req/cpu-s  %s CPU %3.0f%%  GC %4.1f%% of CPU, %d major, %d minor",
                    number, r.connections, r.rps, r.p99_ms ? format("%.1f", r.p99_ms) : "-",
                    r.requests / r.server_cpu_s, @tool, r.tool_cpu_share * 100,
                    (r.gc&.share(r.server_cpu_s) || 0) * 100, r.gc&.major.to_i, r.gc&.minor.to_i)
      end
      first, last = runs.values_at(0, -1)
      [last.rps / first.rps, (last.requests / last.server_cpu_s) / (first.requests / first.server_cpu_s)]
    end

    def measure(server, count)
      gc_before = @gc.sample(server.pid)
      cpu_before = server.cpu_seconds
      tool_before = Process.times
      requests, rps, p99 = tool(server, count, @seconds)
      tool_after = Process.times
      tool_cpu = tool_after.cutime + tool_after.cstime - tool_before.cutime - tool_before.cstime
      Run.new(connections: count, requests: requests, rps: rps, p99_ms: p99, server_cpu_s: server.cpu_seconds - cpu_before,
              tool_cpu_share: tool_cpu / @seconds, gc: GCStat.delta(gc_before, @gc.sample(server.pid)))
    end

    # @return [Array(Integer, Float, Float)] requests completed, req/s and wrk's p99 in ms (nil for h2load).
    def tool(server, count, seconds)
      if @tool == "wrk"
        out = capture(Wrk.command(server.url, connections: count, seconds: seconds, threads: @threads, cpu: 1, latency: true))
        result = Wrk.parse(out)
        [result.requests, result.rps, result.p99_ms]
      else
        out = capture(%W[taskset -c 1 h2load --h1 -c#{count} -t#{@threads} -D#{seconds} #{server.url}])
        [out[/(\d+) succeeded/, 1].to_i, out[/finished in [\d.]+m?s, ([\d.]+) req\/s/, 1].to_f]
      end
    end

    def capture(argv)
      out, status = Open3.capture2e(*argv)
      raise "#{argv.join(' ')} failed:\n#{out}" unless status.success?
      out
    end

    def summary(ratios)
      median = ->(list) { list.sort[list.size / 2] }
      rps, per_cpu = ratios.transpose
      puts format("c=%d ÷ c=%d, median of %d rounds: req/s %.3f (%.3f–%.3f), req per server CPU-s %.3f (%.3f–%.3f)",
                  @connections.last, @connections.first, ratios.size, median.call(rps), rps.min, rps.max,
                  median.call(per_cpu), per_cpu.min, per_cpu.max)
    end
  end
end

if $PROGRAM_NAME == __FILE__
  Bench::ResultsPage.capture("connections_scaling.md")
  Bench::ConnectionsScaling.new(ARGV).run
end
