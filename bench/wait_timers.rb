# frozen_string_literal: true

# Scheduler timers per keep-alive request, and what becomes of them: the real server in this
# process (one reactor thread), raw keep-alive clients on threads of the same process, an app
# that allocates --allocate Strings per request (so minor GCs come often, as with a real app).
# Counts, per run of --requests:
#
#   timers per request   IO::Event::Timers::Handle objects made (TracePoint on its initialize),
#                        with the call sites outside the gems that made them
#   old timers           Handles in the old generation at the end (ObjectSpace.dump's "old"),
#                        i.e. promoted since the last major GC (each run starts after GC.start)
#   minor / major GCs    GC.stat over the run
#
# Counts, not times: they repeat from run to run. Written for the wait between requests
# (Server::Parking::HotWaits, bench/results/per_core.md "Hot waits without a timer each").
#
#   bundle exec ruby bench/wait_timers.rb [--connections 1,16,64] [--requests 20000] [--allocate 300]

require "optparse"
require "socket"
require "stringio"
require "objspace"
require_relative "lib/results_page"

Bench::ResultsPage.capture("wait_timers.md") if $PROGRAM_NAME == __FILE__

$LOAD_PATH.unshift File.expand_path("../lib", __dir__)
require "heron"

module Bench
  # See the file's comment.
  class WaitTimers
    REQUEST = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
    WARM_REQUESTS = 500

    def initialize(connections, requests, allocate)
      @connections = connections
      @requests = requests
      @app = lambda do |_env|
        allocate.times { String.new("x" * 10) }
        [200, { "content-type" => "text/plain", "content-length" => "2" }, ["ok"]]
      end
      @made = 0
      @sites = Hash.new(0)
    end

    def run
      puts "#{RUBY_DESCRIPTION}, heron #{Heron::VERSION}", "",
           "| connections | requests | timers per request | old timers at the end | minor GCs | major GCs |",
           "| ---: | ---: | ---: | ---: | ---: | ---: |"
      @connections.each { |count| puts row(count) }
      puts "", "Call sites of the timers (all runs):", ""
      @sites.sort_by { |_, made| -made }.first(8).each { |site, made| puts "- #{made}: #{site}" }
    end

    private

    def row(count)
      with_server do |port|
        sockets = Array.new(count) { TCPSocket.new("127.0.0.1", port) }
        each_connection(sockets, WARM_REQUESTS / count + 1)
        GC.start
        made, stat = counted { each_connection(sockets, @requests / count) }
        served = @requests / count * count
        format("| %d | %d | %.3f | %d | %d | %d |", count, served, made.fdiv(served), old_timers, stat[:minor_gc_count], stat[:major_gc_count])
      ensure
        sockets&.each(&:close)
      end
    end

    # Runs the block with the timer trace on; returns timers made and the GC.stat deltas.
    def counted
      before = GC.stat
      @made = 0
      tracing.enable { yield }
      after = GC.stat
      [@made, after.to_h { |key, value| [key, value - before[key]] }]
    end

    def tracing
      @tracing ||= TracePoint.new(:call) do |point|
        next unless point.defined_class == IO::Event::Timers::Handle && point.method_id == :initialize
        @made += 1
        @sites[caller_locations(2, 12).map(&:to_s).reject { |line| line.include?("/gems/") }.first || "(in the gems)"] += 1
      end
    end

    def old_timers = ObjectSpace.each_object(IO::Event::Timers::Handle).count { |handle| ObjectSpace.dump(handle).include?('"old":true') }

    # `requests` keep-alive requests on each socket, each socket on its own thread.
    def each_connection(sockets, requests)
      sockets.map do |socket|
        Thread.new do
          buffer = String.new(capacity: 4096)
          requests.times do
            socket.write(REQUEST)
            socket.readpartial(4096, buffer) until buffer.end_with?("\r\n\r\nok")
            buffer.clear
          end
        end
      end.each(&:join)
    end

    def with_server
      log = StringIO.new
      server = Heron::Server.new(@app, Heron::Configuration.new(binds: ["tcp://127.0.0.1:0"], log_io: log, error_io: log, quiet: true))
      server.bind
      thread = Thread.new { server.run }
      server.wait_until_running(30)
      yield server.bound_ports.first
    ensure
      server&.stop
      thread&.join(30)
    end
  end
end

if $PROGRAM_NAME == __FILE__
  connections = [1, 16, 64]
  requests = 20_000
  allocate = 300
  OptionParser.new do |o|
    o.banner = "Usage: bundle exec ruby bench/wait_timers.rb [options]"
    o.on("--connections LIST", Array, "keep-alive connections per run (#{connections.join(',')})") { |list| connections = list.map { Integer(_1) } }
    o.on("--requests N", Integer, "requests per run (#{requests})") { |n| requests = n }
    o.on("--allocate N", Integer, "Strings the app allocates per request (#{allocate})") { |n| allocate = n }
  end.parse!
  Bench::WaitTimers.new(connections, requests, allocate).run
end
