# frozen_string_literal: true

# How many of Heron's lib files one keep-alive HTTP/1.1 request goes through, and how many calls
# cross from one file to another (issue 29, point 4: parking went Connection → ReactorThread →
# ParkingLot → ReactorThread → ConnectionWorkers → ReactorThread → Connection). A TracePoint on
# :call (Ruby methods) in the server's thread counts, per request:
#
#   files   the lib/ files in which a method was entered (over all the requests of the case)
#   calls   Ruby method calls into a lib/ method
#   cross   those whose caller is in another file (a call from async's or Ruby's own code into
#           lib/ counts as crossing too)
#
# Two cases, on one connection to an in-process server (hello world, defaults, no access log):
#
#   hot      requests sent back to back (the next as soon as the response is read): the
#            connection waits for each in its fiber
#   parked   each request sent once the connection has parked (Server#parked_count), counted up
#            to the response and the connection's parking again (the parking lot's timer ticks
#            that fall in that time count too)
#
#   bundle exec ruby bench/call_paths.rb [--requests 200] [--edges]
#
# --edges also lists each case's cross-file calls per request by caller file and callee method.

require "optparse"
require "socket"
require "stringio"
require_relative "lib/results_page"

Bench::ResultsPage.capture("call_paths.md") if $PROGRAM_NAME == __FILE__

$LOAD_PATH.unshift(File.expand_path("../lib", __dir__))
require "heron"

module Bench
  # See the file's comment.
  class CallPaths
    LIB = File.expand_path("../lib", __dir__) + "/"
    APP = ->(_env) { [200, { "content-type" => "text/plain" }, ["hello"]] }
    REQUEST = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"

    # Counts :call events of one thread into lib/ files.
    class Counter
      attr_reader :calls, :cross, :files, :edges

      def initialize(thread)
        @thread = thread
        @calls = @cross = 0
        @files = Hash.new(0)
        @edges = Hash.new(0)
        @trace = TracePoint.new(:call) { |tp| record(tp) }
      end

      def count
        @trace.enable
        yield
      ensure
        @trace.disable
      end

      private

      def record(trace)
        return unless Thread.current.equal?(@thread) && trace.path.start_with?(LIB)
        @calls += 1
        @files[trace.path] += 1
        caller_path = caller_locations(3, 1).first&.absolute_path # [this, the block, the callee, its caller]
        return if caller_path == trace.path
        @cross += 1
        @edges["#{short(caller_path)} -> #{short(trace.path)}##{trace.method_id}"] += 1
      end

      def short(path) = path.to_s.delete_prefix(LIB).sub(%r{\A.*/gems/([^/]+)/.*\z}, "\\1")
    end

    def initialize(requests, edges)
      @requests = requests
      @edges = edges
    end

    def run
      log = StringIO.new
      config = Heron::Configuration.new(binds: ["tcp://127.0.0.1:0"], log_io: log, error_io: log, quiet: true)
      @server = Heron::Server.new(APP, config)
      @server.bind
      thread = Thread.new { @server.run }
      @server.wait_until_running(30)
      socket = TCPSocket.new("127.0.0.1", @server.bound_ports.first)
      5.times { exchange(socket) } # warm: every path loaded, the connection past its first request
      rows = [["hot", count(thread) { @requests.times { exchange(socket) } }, @requests],
              ["parked", count(thread) { parked_requests(socket) }, parked_count]]
      report(rows)
    ensure
      socket&.close
      @server&.stop(graceful: false)
      thread&.join(30)
    end

    private

    def parked_count = [@requests / 10, 5].max

    def parked_requests(socket)
      parked_count.times do
        wait_until { @server.parked_count == 1 }
        exchange(socket)
        wait_until { @server.parked_count == 1 }
      end
    end

    def count(thread, &block)
      counter = Counter.new(thread)
      counter.count(&block)
      counter
    end

    def exchange(socket)
      socket.write(REQUEST)
      head = socket.gets("\r\n\r\n") or raise "connection closed"
      length = head[/content-length: (\d+)/i, 1].to_i
      socket.read(length)
    end

    def wait_until
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 30
      sleep 0.002 until yield || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
    end

    def report(rows)
      puts "| case | requests | lib files entered | lib calls per request | cross-file calls per request |",
           "| --- | ---: | ---: | ---: | ---: |"
      rows.each do |name, counter, requests|
        puts format("| %s | %d | %d | %.1f | %.1f |", name, requests, counter.files.size,
                    counter.calls.fdiv(requests), counter.cross.fdiv(requests))
      end
      rows.each do |name, counter, requests|
        puts "", "#{name}: #{counter.files.keys.map { |path| path.delete_prefix(LIB) }.sort.join(', ')}"
        next unless @edges
        counter.edges.sort_by { |edge, count| [-count, edge] }.each do |edge, count|
          puts format("  %6.2f  %s", count.fdiv(requests), edge)
        end
      end
    end
  end
end

if $PROGRAM_NAME == __FILE__
  requests = 200
  edges = false
  OptionParser.new do |o|
    o.on("--requests N", Integer) { |n| requests = n }
    o.on("--edges") { edges = true }
  end.parse!
  Bench::CallPaths.new(requests, edges).run
end
