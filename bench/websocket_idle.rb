# frozen_string_literal: true

# Idle WebSockets at scale (issue 32): memory per idle WebSocket at 5,000 and 15,000 open, echo
# round trips with 10,000 open, and a broadcast to 10,000, for each server in one run:
#
#   heron            Heron, rack.upgrade (parked between messages, no fiber)
#   iodine           Iodine 0.7, rack.upgrade (bin/setup-bench-peers installs it)
#   falcon           Falcon, async-websocket (a fiber per connection)
#   heron-async      Heron, async-websocket (a fiber per connection), for comparison
#
#   bundle exec ruby bench/websocket_idle.rb
#   bundle exec ruby bench/websocket_idle.rb --only heron,iodine --counts 5000,15000 --rate 1000
#
# Each server runs alone, afresh, as one process (Heron and Iodine one thread; Falcon --count 1,
# whose RSS is its process tree's: a parent and the worker it forks) with
# bench/websocket_idle.ru, access logs off. The bench opens 200 WebSockets and closes them
# (warm-up), reads the RSS, then opens WebSockets up to each count (raw RFC 6455 client,
# Bench::WebSocketFleet, in this process) and reads the settled RSS: KiB per idle WebSocket is
# (RSS - RSS before) / count. Then it closes all but 10,000 (the echo and broadcast count),
# waits 3 s for the server to handle those closes, sends `rate` echo messages a second for
# `seconds`, each on the next socket, timing each round trip, and has one member broadcast to
# all (the time until the last socket has read it).
# Descriptors: this process and each server need one per WebSocket (15,000 of the 20,000 the
# machine allows per process).

require "optparse"
require "tmpdir"
require_relative "lib/server_process"
require_relative "lib/websocket_fleet"
require_relative "lib/peers"
require_relative "lib/clock"
require_relative "lib/results_page"

Bench::ResultsPage.capture("websocket_idle.md") if $PROGRAM_NAME == __FILE__

module Bench
  # Runs the phases above and prints a Markdown table.
  class WebSocketIdle
    include Clock

    ROOT = File.expand_path("..", __dir__)
    APP = File.join(__dir__, "websocket_idle.ru")
    SERVERS = %w[heron iodine falcon heron-async].freeze
    # Seconds between server pings (both ping idle WebSockets every 40 s by default): longer than
    # a run, so no ping lands among the echoes (the fleet reads any frame as the answer).
    PING = 255

    def initialize(counts:, rate:, seconds:, active:, only:)
      @counts = counts
      @rate = rate
      @seconds = seconds
      @active = active
      @only = only
      @home = Peers.gem_home if only.include?("iodine")
      limit = Process.getrlimit(:NOFILE)[1]
      Process.setrlimit(:NOFILE, limit)
    end

    def run
      rows = @only.map { |name| [name, measure(name)] }
      header = @counts.map { |count| "KiB/WS at #{count}" } + ["echo p50 ms", "echo p99 ms", "broadcast to #{@active}: ms", "failures"]
      puts "| server | #{header.join(' | ')} |", "|#{' --- |' * (header.size + 1)}"
      rows.each { |name, row| puts "| #{name} | #{row.join(' | ')} |" }
    end

    private

    def measure(name)
      port = ServerProcess.free_port
      log = File.join(Dir.tmpdir, "websocket_idle-#{name}.log")
      server = ServerProcess.new(argv(name, port), port: port, log: log, chdir: ROOT, env: env(name),
                                                   rlimit_nofile: Process.getrlimit(:NOFILE)[1]).start
      fleet = WebSocketFleet.new("127.0.0.1", port)
      warm(fleet)
      before = server.settled_rss_kb(tolerance: 0.005, tree: true)
      sizes = @counts.map do |count|
        fleet.open(count - fleet.sockets.size)
        rss = server.settled_rss_kb(tolerance: 0.005, tree: true)
        warn "#{name}: #{fleet.sockets.size} WebSockets, RSS #{before} -> #{rss} KiB"
        ((rss - before).fdiv(fleet.sockets.size)).round(1)
      end
      sizes + load_phase(fleet) + [fleet.failures.empty? ? "0" : fleet.failures.map { |kind, n| "#{kind}: #{n}" }.join(", ")]
    ensure
      fleet&.close
      server&.stop
    end

    def load_phase(fleet)
      fleet.close([fleet.sockets.size - @active, 0].max)
      sleep 3 # the server handles those closes before the echoes start
      latencies = fleet.echo_latencies(rate: @rate, seconds: @seconds)
      sleep 1 # stray answers (none expected) before the broadcast
      seconds, = fleet.broadcast
      [percentile(latencies, 0.5), percentile(latencies, 0.99), (seconds * 1000).round(1)]
    end

    def percentile(sorted, fraction)
      return "-" if sorted.empty?
      (sorted[[(sorted.size * fraction).ceil - 1, 0].max] * 1000).round(2)
    end

    def warm(fleet)
      fleet.open(200)
      fleet.echo_latencies(rate: 200, seconds: 1)
      fleet.close
      sleep 1
    end

    def argv(name, port)
      case name
      when "heron", "heron-async"
        ["bundle", "exec", "ruby", "#{ROOT}/exe/heron", "-b", "tcp://127.0.0.1:#{port}", "-e", "production", "-q",
         "--max-connections", "19000", "--websocket-ping-interval", PING.to_s, APP]
      when "iodine" then Peers.argv("iodine", @home, port, APP, extra: ["-ping", PING.to_s])
      when "falcon" then %W[bundle exec falcon serve --count 1 -b http://127.0.0.1:#{port} -c #{APP}]
      end
    end

    def env(name)
      return Peers.env(@home) if name == "iodine"
      name == "heron-async" ? { "WS_API" => "async" } : {}
    end
  end
end

options = { counts: [5000, 15_000], rate: 1000, seconds: 5, active: 10_000, only: Bench::WebSocketIdle::SERVERS }
OptionParser.new do |parser|
  parser.on("--counts LIST", Array) { |list| options[:counts] = list.map(&:to_i) }
  parser.on("--rate N", Integer, "echo messages a second") { |n| options[:rate] = n }
  parser.on("--seconds N", Integer, "how long the echo phase runs") { |n| options[:seconds] = n }
  parser.on("--active N", Integer, "WebSockets open for echo and broadcast") { |n| options[:active] = n }
  parser.on("--only LIST", Array) { |list| options[:only] = list }
end.parse!
Bench::WebSocketIdle.new(**options).run if $PROGRAM_NAME == __FILE__
