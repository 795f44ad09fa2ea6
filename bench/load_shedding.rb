# frozen_string_literal: true

# Load shedding at twice capacity: bench/pool.ru serves at most 200 requests/s; heron attack sends
# 400/s open loop for DURATION seconds, once without limits and once with --max-in-flight 8.
# Prints, for each run, requests sent, 200s, 503s, errors, and the p50/p99/max corrected latency
# of the admitted (200) requests, from `heron attack --per-request`.
#
#   bundle exec ruby bench/load_shedding.rb [DURATION]   (default 15)
require "socket"
require "rbconfig"
require_relative "lib/results_page"

Bench::ResultsPage.capture("load_shedding.md") if $PROGRAM_NAME == __FILE__

ROOT = File.expand_path("..", __dir__)
HERON = File.join(ROOT, "exe/heron")
DURATION = Integer(ARGV.fetch(0, "15"))
RATE = 400

def free_port
  server = TCPServer.new("127.0.0.1", 0)
  server.addr[1]
ensure
  server&.close
end

def run(label, *limits)
  port = free_port
  pid = Process.spawn(RbConfig.ruby, HERON, "-e", "production", "-q", "--control-bind", "tcp://127.0.0.1:0",
                      "-b", "tcp://127.0.0.1:#{port}", *limits, File.join(ROOT, "bench/pool.ru"),
                      out: File::NULL, err: File::NULL)
  sleep 0.1 until (TCPSocket.new("127.0.0.1", port).close || true rescue false)
  lines = IO.popen([RbConfig.ruby, HERON, "attack", "http://127.0.0.1:#{port}/", "--rate", RATE.to_s,
                    "--duration", DURATION.to_s, "--per-request", "--timeout", "60s"], err: File::NULL, &:readlines)
  report(label, lines)
ensure
  Process.kill("TERM", pid) if pid
  Process.wait(pid) if pid
end

def report(label, lines)
  results = lines.filter_map { |line| line.match(/status=(\S+) latency=([\d.]+)ms/)&.captures }
  ok = results.select { |status, _| status == "200" }.map { |_, ms| ms.to_f }.sort
  shed = results.count { |status, _| status == "503" }
  pick = ->(q) { ok.empty? ? 0 : ok[[(ok.size * q).ceil - 1, 0].max] }
  puts format("%-28s sent %5d  200: %5d  503: %5d  other: %4d  admitted p50 %8.1f ms  p99 %8.1f ms  max %8.1f ms",
              label, results.size, ok.size, shed, results.size - ok.size - shed, pick[0.5], pick[0.99], ok.last || 0)
end

puts "bench/pool.ru (capacity 200/s), #{RATE}/s open loop for #{DURATION}s, #{Time.now.utc}"
run("no limit")
run("--max-in-flight 8", "--max-in-flight", "8")
