# frozen_string_literal: true

# What a request costs the CPU as the connections grow, counted rather than timed: the real server
# (`exe/heron`) under callgrind with its cache simulation (Bench::CallgrindServer), driven by N
# keep-alive connections at once, for each N. Per request: instructions, first-level data cache
# misses (D1) and last-level data cache misses (LLd), the marginal count between two runs of
# different lengths (accepting and closing the N connections cancels out).
#
# The simulated last level is sized as this machine's L2 (`--ll`, default 1 MiB, 16-way: the
# per-core L2 of the 2-vCPU VM the results were measured on): callgrind simulates two levels
# only, and with the host's L3 (32 MiB) as the last one nothing a few hundred connections touch
# would miss. A request whose fiber stack, objects and buffers were pushed out of L2 by the other
# connections' requests since its last one shows as LLd misses here; on the machine they cost a
# trip to L3 each. Counts repeat from run to run (no timing, whatever the machine's load); the
# kernel's side (the sockets) is not counted.
#
#   bundle exec ruby bench/connections_cache.rb [--app bench/hello.ru] [--connections 16,256]
#     [--requests 2560,12800] [--ll BYTES,WAYS,LINE]
#
# About 10 minutes per connection count on a quiet machine (two callgrind runs of the server with
# the cache simulation). Needs valgrind.
require "optparse"
require_relative "lib/callgrind_server"
require_relative "lib/results_page"

Bench::ResultsPage.capture("connections_cache.md") if $PROGRAM_NAME == __FILE__

module Bench
  # See the file's comment.
  class ConnectionsCache
    EVENTS = { "instructions" => "refs", "D1 misses" => "D1  misses", "LLd misses" => "LLd misses" }.freeze

    def initialize(argv)
      @app = "bench/hello.ru"
      @connections = [16, 256]
      @requests = [2560, 12_800]
      @ll = "1048576,16,64"
      OptionParser.new do |o|
        o.on("--app PATH", "rackup file (default bench/hello.ru)") { |v| @app = v }
        o.on("--connections LIST", Array, "keep-alive connections at once (default 16,256)") { |v| @connections = v.map { |c| Integer(c) } }
        o.on("--requests SHORT,LONG", Array, "requests in the two runs (default 2560,12800)") { |v| @requests = v.map { |r| Integer(r) } }
        o.on("--ll BYTES,WAYS,LINE", "simulated last-level cache (default 1048576,16,64)") { |v| @ll = v }
      end.parse!(argv)
    end

    def run
      puts "#{@app}; #{RUBY_DESCRIPTION}; simulated LL #{@ll}; per request, runs of #{@requests.join(' and ')} requests",
           "", "| connections | instructions | D1 misses | LLd misses |", "| ---: | ---: | ---: | ---: |"
      @connections.each { |count| puts row(count) }
    end

    private

    def row(count)
      server = CallgrindServer.new(app: @app, flags: ["--no-profile"], connections: count, warmup: [2560, count * 10].max,
                                   valgrind: ["--cache-sim=yes", "--LL=#{@ll}"])
      short, long = @requests.map { |requests| events(server, requests) }
      per = EVENTS.keys.map { |name| (long[name] - short[name]).fdiv(@requests[1] - @requests[0]).round }
      "| #{count} | #{per.join(' | ')} |"
    end

    def events(server, requests)
      server.instructions(requests)
      log = File.read(File.join(File.dirname(server.profile), "callgrind.log"))
      EVENTS.transform_values { |label| log[/#{label}:\s+([\d,]+)/, 1].delete(",").to_i }
    end
  end
end

Bench::ConnectionsCache.new(ARGV).run if $PROGRAM_NAME == __FILE__
