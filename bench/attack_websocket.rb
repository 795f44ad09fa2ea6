# frozen_string_literal: true

# `heron attack ws://` cross-checked against a reference client built on async-websocket's own
# client (Async::WebSocket::Client, a different connection and timing code from heron attack's),
# on the async-websocket echo app of heron-attack/test/heron/attack/support/echo.ru served by
# Heron and by Falcon.
#
#   bundle exec ruby bench/attack_websocket.rb [--connections 20] [--rates 5,25] [--duration 5]
#                                              [--servers heron,falcon]
#
# Each row: C connections opened at 100/s, each sending RATE messages a second for the
# duration. heron attack sends open loop; the reference sends each connection's next message
# when it is due or, if the previous echo is late, when it arrives (closed loop per
# connection), timing connect (TCP + upgrade) and each echo from its send. At rates the server
# keeps up with, the two should agree on achieved message rate (messages after the first over
# the time from the start to the last send, as heron attack computes it), connect time (heron
# attack's from each connection's due time, the reference's from its start) and round trip
# (heron attack's uncorrected figures). Results: bench/results/attack_websocket.md.

require "json"
require "open3"
require "optparse"
require "tmpdir"
require "async"
require "async/http/endpoint"
require "async/websocket/client"
require_relative "lib/server_process"
require_relative "lib/results_page"
require_relative "lib/attack_json"
require_relative "lib/clock"

# One run of the comparison; see the comment at the top.
class AttackWebSocketBench
  ROOT = File.expand_path("..", __dir__)
  ECHO = File.join(ROOT, "heron-attack/test/heron/attack/support/echo.ru")
  MESSAGE = "heron attack"

  def initialize(argv)
    @connections = 20
    @rates = [5, 25]
    @duration = 5
    @servers = %w[heron falcon]
    OptionParser.new do |o|
      o.on("--connections N", Integer) { |v| @connections = v }
      o.on("--rates LIST") { |v| @rates = v.split(",").map { |rate| Integer(rate) } }
      o.on("--duration S", Integer) { |v| @duration = v }
      o.on("--servers LIST") { |v| @servers = v.split(",") }
    end.parse!(argv)
  end

  def run
    Bench::ResultsPage.capture("attack_websocket.md")
    puts "#{@connections} connections opened at 100/s, each sending RATE messages/s for #{@duration}s; ms"
    puts
    puts "| server | rate per conn. | tool | messages/s | connect p50 | connect p99 | round trip p50 | round trip p99 | round trip max | errors |"
    puts "|---|---|---|---|---|---|---|---|---|---|"
    Dir.mktmpdir("attack-ws") do |dir|
      @servers.each { |name| with_server(name, dir) { |url| @rates.each { |rate| rows(name, url, rate, dir) } } }
    end
    puts
    puts "heron attack: `heron attack URL -c #{@connections} --connect-rate 100 -r RATE -d #{@duration}` (round trip: uncorrected)"
  end

  private

  def with_server(name, dir)
    port = Bench::ServerProcess.free_port
    argv = if name == "heron"
             [RbConfig.ruby, File.join(ROOT, "exe/heron"), "-e", "production", "-b", "tcp://127.0.0.1:#{port}", ECHO]
           else
             [RbConfig.ruby, Gem.bin_path("falcon", "falcon"), "serve", "-b", "http://127.0.0.1:#{port}", "-n", "1", "-c", ECHO]
           end
    server = Bench::ServerProcess.new(argv, port: port, log: File.join(dir, "#{name}.log"), chdir: dir).start
    yield "ws://127.0.0.1:#{port}/"
  ensure
    server&.stop
  end

  def rows(name, url, rate, dir)
    attack = attack(url, rate, dir)
    ws = attack["websocket"]
    print_row(name, rate, "heron attack", attack["rate"]["achieved"], ws["connect_ms"], attack["latency_ms"]["uncorrected"],
              attack["requests"]["sent"] - attack["requests"]["ok"])
    reference = Reference.new(url.sub("ws://", "http://"), @connections, rate, @duration).run
    print_row(name, rate, "async-websocket client", reference[:rate], reference[:connect], reference[:round_trip], reference[:errors])
  end

  def print_row(name, rate, tool, achieved, connect, round_trip, errors)
    cells = [name, rate, tool, format("%.1f", achieved), *[connect["p50"], connect["p99"], round_trip["p50"], round_trip["p99"],
                                                         round_trip["max"]].map { |ms| format("%.2f", ms) }, errors]
    puts "| #{cells.join(' | ')} |"
  end

  def attack(url, rate, dir)
    Bench::AttackJSON.run([url, "-c", @connections.to_s, "--connect-rate", "100", "-r", rate.to_s, "-d", @duration.to_s], dir)
  end

  # The reference client: async-websocket's, each connection sending its next message when due
  # (or when the previous echo arrives, if later) and timing the echo from the send.
  class Reference
    def initialize(url, connections, rate, duration)
      @endpoint = Async::HTTP::Endpoint.parse(url)
      @connections = connections
      @rate = rate
      @messages = rate * duration
      @connects = []
      @round_trips = []
      @errors = 0
    end

    def run
      start = Bench::Clock.now
      Sync { Array.new(@connections) { |k| Async { connection(start + (k / 100.0)) } }.each(&:wait) }
      { rate: (@round_trips.size - 1) / (@last_sent - start), connect: stats(@connects), round_trip: stats(@round_trips), errors: @errors }
    end

    private

    def connection(due)
      sleep([due - Bench::Clock.now, 0].max)
      opened = Bench::Clock.now
      Async::WebSocket::Client.connect(@endpoint) do |connection|
        @connects << ((Bench::Clock.now - opened) * 1000)
        (1..@messages).each { |j| echo(connection, due + (j.to_f / @rate)) }
      end
    rescue StandardError
      @errors += 1
    end

    def echo(connection, due)
      sleep([due - Bench::Clock.now, 0].max)
      sent = @last_sent = Bench::Clock.now
      connection.write(Protocol::WebSocket::TextMessage.new(MESSAGE))
      connection.flush
      connection.read&.to_str == MESSAGE ? @round_trips << ((Bench::Clock.now - sent) * 1000) : @errors += 1
    end

    def stats(values)
      sorted = values.sort
      at = ->(p) { sorted.empty? ? 0.0 : sorted[[(p / 100.0 * sorted.size).ceil - 1, 0].max] }
      { "p50" => at.call(50), "p99" => at.call(99), "max" => sorted.last || 0.0 }
    end
  end
end

AttackWebSocketBench.new(ARGV).run if $PROGRAM_NAME == __FILE__
