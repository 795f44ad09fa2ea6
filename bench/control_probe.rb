# frozen_string_literal: true

# How long a health probe waits while silent connections sit on the control port (issue 28):
# starts `exe/heron` (from HERON_ROOT, this tree by default) with bench/hello.ru and a control
# listener on a free port, opens N connections to the control port that never send a byte, then
# times /health/live probes made the way a kubelet makes them (a new connection, GET, read to
# the end), one after another, each with a 15 s bound.
#
#   ruby bench/control_probe.rb [--silent 64,1000] [--probes 5]
#   HERON_ROOT=/work/main ruby bench/control_probe.rb   # the same against another checkout

require "optparse"
require "rbconfig"
require "socket"
require "tmpdir"
require_relative "../test/support/free_port"
require_relative "lib/clock"
require_relative "lib/results_page"

Bench::ResultsPage.capture("control_probe.md") if $PROGRAM_NAME == __FILE__

# Runs one server per silent-connection count and prints a markdown table.
class ControlProbe
  ROOT = File.expand_path(ENV.fetch("HERON_ROOT", File.expand_path("..", __dir__)))
  APP = File.expand_path("hello.ru", __dir__)

  def initialize(counts, probes)
    @counts = counts
    @probes = probes
  end

  def run
    puts "| silent connections | probes answered | median ms | max ms |", "|---:|---:|---:|---:|"
    @counts.each { |count| puts row(count, measure(count)) }
  end

  private

  def row(count, times)
    answered = times.compact.sort
    median = answered.empty? ? "-" : format("%.1f", answered[answered.size / 2] * 1000)
    max = answered.empty? ? "-" : format("%.1f", answered.last * 1000)
    "| #{count} | #{answered.size}/#{times.size} | #{median} | #{max} |"
  end

  def measure(count)
    with_server do |port|
      silent = Array.new(count) { TCPSocket.new("127.0.0.1", port) }
      sleep 0.5 # let the listener accept them all (the server's accept loop, not the probes)
      Array.new(@probes) { probe(port) }
    ensure
      silent&.each(&:close)
    end
  end

  def probe(port)
    started = Bench::Clock.now
    socket = TCPSocket.new("127.0.0.1", port)
    socket.write("GET /health/live HTTP/1.1\r\nhost: localhost:#{port}\r\n\r\n")
    data = +""
    while socket.wait_readable(15) && (chunk = socket.read_nonblock(4096, exception: false))
      data << chunk if chunk.is_a?(String)
    end
    data.start_with?("HTTP/1.1 200") ? Bench::Clock.now - started : nil
  ensure
    socket&.close
  end

  def with_server
    port = FreePort.free_port
    Dir.mktmpdir("control-probe") do |dir|
      pid = Process.spawn(RbConfig.ruby, "-I#{ROOT}/lib", "#{ROOT}/exe/heron", "-q", "-b", "tcp://127.0.0.1:0",
                          "--control-bind", "tcp://127.0.0.1:#{port}", APP, chdir: dir, out: File::NULL, err: File::NULL)
      wait_live(port)
      yield port
    ensure
      Process.kill("KILL", pid) if pid
      Process.wait(pid) if pid
    end
  end

  def wait_live(port)
    60.times do
      return if probe(port)
    rescue SystemCallError
      sleep 0.5
    end
    abort "heron did not answer on its control port"
  end
end

counts = [64, 1000]
probes = 5
OptionParser.new do |parser|
  parser.on("--silent LIST") { |list| counts = list.split(",").map { |count| Integer(count) } }
  parser.on("--probes N", Integer) { |n| probes = n }
end.parse!
ControlProbe.new(counts, probes).run
