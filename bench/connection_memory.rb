# frozen_string_literal: true

# Memory per connection, Heron against Puma in one run (issue 12, point 8).
#
#   bundle exec ruby bench/connection_memory.rb                 # 2,000 connections per phase
#   bundle exec ruby bench/connection_memory.rb --count 3000 --only heron
#
# For each server and each kind of connection it starts the server afresh (single process,
# production, no access log, bench/connection_memory.ru), warms it with 200 short keep-alive
# requests, reads its RSS, opens COUNT connections, waits for the RSS to settle and reports
# (RSS after - RSS before) / COUNT in KiB. Two kinds:
#
#   idle   keep-alive connections that each got one GET answered and then say nothing
#   slow   connections that sent a POST head (Content-Length: 1000000) and 100 body bytes,
#          so the app is blocked reading the body (Heron) or the server buffers it (Puma)
#
# Heron runs with its defaults but for max_connections (COUNT + 1000, so none is evicted). Puma
# runs in single mode with its default threads (0:5).

require "optparse"
require "socket"
require "tmpdir"
require_relative "lib/server_process"
require_relative "lib/idle_connections"
require_relative "lib/clock"
require_relative "lib/results_page"

Bench::ResultsPage.capture("connection_memory.md") if $PROGRAM_NAME == __FILE__

module Bench
  # Runs the phases above and prints a Markdown table.
  class ConnectionMemory
    ROOT = File.expand_path("..", __dir__)
    APP = File.join(__dir__, "connection_memory.ru")
    SLOW_HEAD = "POST /up HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\n#{'x' * 100}".freeze

    def initialize(count:, only:)
      @count = count
      @only = only
      Process.setrlimit(:NOFILE, [count * 2 + 256, Process.getrlimit(:NOFILE)[1]].min)
    end

    def run
      rows = servers.map do |name, argv|
        [name, measure(name, argv, :idle), measure(name, argv, :slow)]
      end
      puts "| server | idle keep-alive KiB/conn | slow body KiB/conn |", "| --- | --- | --- |"
      rows.each { |name, idle, slow| puts "| #{name} | #{idle.round(1)} | #{slow.round(1)} |" }
    end

    private

    def servers
      all = {
        "heron" => ->(port) { ["bundle", "exec", "ruby", "#{ROOT}/exe/heron", "-b", "tcp://127.0.0.1:#{port}", "-e", "production", "-q", "--max-connections", (@count + 1000).to_s, APP] },
        "puma" => ->(port) { ["bundle", "exec", "puma", "--no-config", "-b", "tcp://127.0.0.1:#{port}", "-e", "production", "-q", APP] },
      }
      all.select { |name, _| @only.nil? || @only.include?(name) }
    end

    def measure(name, argv, kind)
      port = ServerProcess.free_port
      log = File.join(Dir.tmpdir, "connection_memory-#{name}-#{kind}.log")
      server = ServerProcess.new(argv.call(port), port: port, log: log, chdir: ROOT, rlimit_nofile: nofile).start
      warm(port)
      before = server.settled_rss_kb
      sockets = kind == :idle ? open_idle(port) : open_slow(port)
      after = server.settled_rss_kb
      warn "#{name} #{kind}: #{sockets.size} connections, RSS #{before} -> #{after} KiB"
      (after - before).fdiv(sockets.size)
    ensure
      sockets&.each { |socket| socket.close unless socket.closed? } if sockets.is_a?(Array)
      server&.stop
    end

    # Descriptors for the server: one per connection and plenty to spare, within the hard limit.
    def nofile = [@count * 2 + 256, Process.getrlimit(:NOFILE)[1]].min

    def warm(port)
      pool = IdleConnections.new("127.0.0.1", port, batch: 200)
      pool.open(200)
      pool.close
    end

    def open_idle(port)
      pool = IdleConnections.new("127.0.0.1", port, batch: 500)
      answered = pool.open(@count)
      raise "only #{answered} of #{@count} idle connections answered: #{pool.failures}" if answered < @count
      pool.instance_variable_get(:@sockets)
    end

    def open_slow(port)
      Array.new(@count) do
        socket = Socket.tcp("127.0.0.1", port, connect_timeout: 5)
        socket.write(SLOW_HEAD)
        socket
      end
    end
  end
end

options = { count: 2000, only: nil }
OptionParser.new do |o|
  o.on("--count N", Integer) { |n| options[:count] = n }
  o.on("--only LIST") { |list| options[:only] = list.split(",") }
end.parse!
Bench::ConnectionMemory.new(**options).run
