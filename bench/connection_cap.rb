# frozen_string_literal: true

# New clients while slow clients fill the server (issue 28, point 6): D "drippers" connect and
# send a request head, or a head and then a body (Content-Length: 1,000,000), one byte per
# dripper per second, reconnecting when the server closes them (as an attacker would); once all
# are connected, a normal client opens a new connection for each GET (Connection: close), one
# every 50 ms for the measuring window, and times each answer (15 s at most). Two cases, each on
# a fresh server, Heron vs Puma (its defaults, 5 threads; it has no connection limit):
#
# - 200 drippers, half dripping heads and half bodies, Heron with `--max-connections 200`;
# - 4,096 drippers dripping bodies, Heron at its default `max_connections` (4,096).
#
# Reported: the first new GET's wait, the GETs' p50/p99/max, how many got no answer in 15 s, and
# how many times drippers were closed (and reconnected) during the window. Descriptor limits:
# the script raises its own soft limit, and the servers', to twice the drippers plus 256.
#
#   bundle exec ruby bench/connection_cap.rb [--only heron,puma] [--seconds 10] [--out FILE]
#
# CASE=0 or CASE=1 in the environment runs only that case. With drippers that all connected at
# once, Heron cuts the body drippers together about 10 s in (min_body_rate after
# body_rate_grace) and they all reconnect: a 10 s window includes that burst, a 7 s one ends
# before it.
require "optparse"
require "socket"
require "tmpdir"
require "etc"
require_relative "lib/options"
require_relative "lib/report_file"
require_relative "lib/servers"
require_relative "lib/proc_fs"

module Bench
  # Runs the cases and writes bench/results/connection_cap.md.
  class ConnectionCap
    ROOT = File.expand_path("..", __dir__)
    Case = Struct.new(:label, :drippers, :heads, :heron_extra, keyword_init: true)
    CASES_ALL = [
      Case.new(label: "200 drippers (100 heads, 100 bodies), Heron --max-connections 200", drippers: 200, heads: 100,
               heron_extra: %w[--max-connections 200]),
      Case.new(label: "4,096 body drippers, Heron's default max_connections (4,096)", drippers: 4096, heads: 0, heron_extra: []),
    ].freeze
    CASES = ENV["CASE"] ? [CASES_ALL[ENV["CASE"].to_i]] : CASES_ALL
    HEAD = "GET / HTTP/1.1\r\nHost: x\r\n"
    BODY_HEAD = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n"
    GET = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    GET_TIMEOUT = 15.0

    def initialize(servers:, seconds:, out:)
      @servers = servers
      @seconds = seconds
      @out = out
      @rows = []
    end

    def run
      Dir.mktmpdir("heron-bench-connection-cap") do |dir|
        @dir = dir
        CASES.product(@servers).each { |kase, name| @rows << [kase.label, name, *measure(kase, name)].tap { |row| warn row.inspect } }
      end
      Bench::ReportFile.publish(@out, report)
    end

    private

    def measure(kase, name)
      nofile = kase.drippers * 2 + 256
      hard = Process.getrlimit(:NOFILE)[1]
      Process.setrlimit(:NOFILE, [nofile, hard].min, hard)
      server = start(name, kase, nofile)
      drippers = Drippers.new(server.port, kase.drippers, kase.heads)
      drippers.connect_all
      sleep 1 # let the server accept them and read their first bytes
      closed_before = drippers.reconnects
      samples = get_loop(server.port)
      [*stats(samples), drippers.reconnects - closed_before]
    ensure
      drippers&.stop
      server&.stop
    end

    def start(name, kase, nofile, hard = Process.getrlimit(:NOFILE)[1])
      Servers.start(name, "bench/hello.ru", name == "heron" ? kase.heron_extra : [], dir: @dir, rlimit_nofile: [nofile, hard].min)
    end

    # One GET on a new connection every 50 ms (or as soon as the last one ended) for @seconds.
    # @return [Array<Float, nil>] each GET's wait in seconds; nil for no answer.
    def get_loop(port)
      samples = []
      deadline = Clock.now + @seconds
      while Clock.now < deadline
        started = Clock.now
        samples << timed_get(port)
        pause = 0.05 - (Clock.now - started)
        sleep pause if pause.positive?
      end
      samples
    end

    def timed_get(port)
      started = Clock.now
      socket = Socket.tcp("127.0.0.1", port, connect_timeout: GET_TIMEOUT)
      socket.write(GET)
      return nil unless socket.wait_readable(GET_TIMEOUT) && socket.readpartial(4096).start_with?("HTTP/1.1 200")
      Clock.now - started
    rescue SystemCallError, IOError # EOFError is an IOError
      nil
    ensure
      socket&.close
    end

    # @return [Array] first wait, p50, p99, max (seconds, nil = no answer), failed count, count.
    def stats(samples)
      answered = samples.compact.sort
      pick = ->(q) { answered.empty? ? nil : answered[[(answered.size * q).ceil - 1, 0].max] }
      [samples.first, pick.(0.5), pick.(0.99), answered.last, samples.count(nil), samples.size]
    end

    def report
      seconds = ->(value) { value.nil? ? "none" : format("%.3f", value) }
      <<~MD
        # New clients at the connection cap: Heron vs Puma (issue 28, point 6)

        #{Time.now.utc.strftime('%Y-%m-%d %H:%M')} UTC, `bundle exec ruby bench/connection_cap.rb #{ARGV_TEXT}`,
        Heron at #{`git -C #{ROOT} rev-parse --short HEAD`.strip}, Ruby #{RUBY_VERSION}, #{Etc.nprocessors} cores, shared
        VM (load average #{Bench::ProcFS.load_averages.join(' ')} at the end). Drippers send a
        byte a second each and reconnect when closed; a normal client opens a new connection per
        GET, one every 50 ms for #{@seconds} s, and waits up to #{GET_TIMEOUT.to_i} s for each answer. Times in seconds.

        | case | server | first new GET | p50 | p99 | max | GETs unanswered | GETs | drippers closed |
        |---|---|---|---|---|---|---|---|---|
        #{@rows.map { |label, name, first, p50, p99, max, failed, count, closed| "| #{label} | #{name} | #{seconds.(first)} | #{seconds.(p50)} | #{seconds.(p99)} | #{seconds.(max)} | #{failed} | #{count} | #{closed} |" }.join("\n")}
      MD
    end

    # The slow clients: one thread connects them and sends each a byte a second.
    class Drippers
      attr_reader :reconnects

      def initialize(port, count, heads)
        @port = port
        @kinds = Array.new(count) { |index| index < heads ? :head : :body }
        @sockets = []
        @reconnects = 0
      end

      def connect_all
        @sockets = @kinds.map { |kind| open(kind) }
        @thread = Thread.new { loop { drip_round } }
      end

      def stop
        @thread&.kill
        @sockets.each { |socket| socket&.close unless socket&.closed? }
      end

      private

      def open(kind)
        socket = Socket.tcp("127.0.0.1", @port, connect_timeout: 5)
        socket.write(kind == :head ? HEAD : BODY_HEAD)
        socket
      rescue SystemCallError
        nil
      end

      # A byte to each, then the rest of the second asleep; a socket the server closed (a
      # write fails, or EOF / a response is readable) is replaced by a new connection.
      def drip_round
        started = Clock.now
        @sockets.each_with_index do |socket, index|
          next reconnect(index) if socket.nil? || closed?(socket)
          socket.write_nonblock(@kinds[index] == :head ? "X" : "a", exception: false)
        rescue SystemCallError, IOError
          reconnect(index)
        end
        left = 1.0 - (Clock.now - started)
        sleep left if left.positive?
      end

      def closed?(socket)
        socket.wait_readable(0) ? true : false
      end

      def reconnect(index)
        @sockets[index]&.close
        @reconnects += 1
        @sockets[index] = open(@kinds[index])
      end
    end
  end
end

if $PROGRAM_NAME == __FILE__
  ARGV_TEXT = ARGV.join(" ")
  options = { servers: %w[heron puma], seconds: 10, out: File.join(Bench::ConnectionCap::ROOT, "bench/results/connection_cap.md") }
  OptionParser.new do |o|
    Bench::Options.only(o, %w[heron puma]) { |list| options[:servers] = list }
    o.on("--seconds N", Float) { |n| options[:seconds] = n }
    Bench::Options.out(o) { |path| options[:out] = path }
  end.parse!
  Bench::ConnectionCap.new(**options).run
end
