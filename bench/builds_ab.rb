# frozen_string_literal: true

# Two Heron builds side by side on one app: is a change slower or faster? Each build is a
# checkout (e.g. `git worktree add /tmp/before COMMIT && (cd /tmp/before && bundle exec rake compile)`).
# Both servers run pinned to CPU 0 as SCHED_BATCH (so they take turns in whole time slices and
# get the same CPU time), each driven by its own wrk from CPU 1 at the same time; the ratio of
# their req/s is the ratio of their cost per request, whatever else the machine is doing.
#
#   bundle exec ruby bench/builds_ab.rb BEFORE_DIR AFTER_DIR [ROUNDS] [APP.ru]
#   HERON_AB_FLAGS="--profile --no-metrics" bundle exec ruby bench/builds_ab.rb ... (default: --no-profile)
#   HERON_AB_AFTER_FLAGS="--keepalive-park-after 20" ...   (flags for the AFTER server only: one build, two settings)
#   HERON_AB_CONNECTIONS=256 ...       (wrk -c for both, default 16); "16,256": BEFORE at 16, AFTER at 256,
#                                        which pairs one build against itself across connection counts
#   bundle exec ruby bench/builds_ab.rb iodine . [ROUNDS] [APP.ru]   (BEFORE a peer: iodine or itsi)
#
# BEFORE may name a peer of bench/run.rb (installed by bin/setup-bench-peers, run as there: one
# process, one thread), so "after/before" is Heron against it per CPU-second, side by side.
# Prints each round (req/s and server CPU per request of both: the process group's, which counts
# a peer's forked worker) and the medians of after/before: of req/s, and per server CPU-second
# (before's CPU per request over after's). Two Heron builds are both always busy, so the two
# agree; a peer that waits for its client part of the time gets less than half of CPU 0, and
# then only the per-CPU-second ratio compares the servers' cost.
# Not a test: numbers depend on the machine. Needs wrk, taskset and chrt.
require "socket"
require_relative "lib/peers"
require_relative "lib/proc_fs"
require_relative "lib/results_page"

Bench::ResultsPage.capture("builds_ab.md") if $PROGRAM_NAME == __FILE__

before, after, rounds, app = ARGV
abort "usage: #{$PROGRAM_NAME} BEFORE_DIR|iodine|itsi AFTER_DIR [ROUNDS] [APP.ru]" unless before && after
rounds = Integer(rounds || 5)
FLAGS = ENV.fetch("HERON_AB_FLAGS", "--no-profile").split # e.g. "--profile --no-metrics" to compare profiled builds
AFTER_FLAGS = ENV.fetch("HERON_AB_AFTER_FLAGS", "").split
CONNECTIONS = ENV.fetch("HERON_AB_CONNECTIONS", "16").split(",").map { |count| Integer(count) }
app = File.expand_path(app || File.join(__dir__, "hello.ru"))

def command(dir, port, app, flags)
  if Bench::Peers::NAMES.include?(dir)
    home = Bench::Peers.gem_home or abort "#{dir} is not installed (bin/setup-bench-peers)"
    return [Bench::Peers.env(home), *Bench::Peers.argv(dir, home, port, app), { chdir: Dir.pwd }]
  end
  [{ "BUNDLE_GEMFILE" => File.join(dir, "Gemfile") }, "bundle", "exec", "ruby", File.join(dir, "exe/heron"), "-e", "production",
   "-q", *flags, "-b", "tcp://127.0.0.1:#{port}", app, { chdir: dir }]
end

def start(dir, port, app, flags = FLAGS)
  log = "/tmp/heron-ab-#{port}.log"
  env, *argv, options = command(dir, port, app, flags)
  pid = Process.spawn(env, "taskset", "-c", "0", "chrt", "-b", "0", *argv, **options, out: log, err: [:child, :out], pgroup: true)
  100.times { break if listening?(port); sleep 0.2 }
  pid
end

def listening?(port)
  TCPSocket.new("127.0.0.1", port).close.nil?
rescue SystemCallError
  false
end

def wrk(port, seconds, connections) = `taskset -c 1 wrk -t1 -c#{connections} -d#{seconds}s http://127.0.0.1:#{port}/`[/Requests\/sec:\s+([\d.]+)/, 1].to_f

groups = { before: start(before, 9801, app), after: start(after, 9802, app, FLAGS + AFTER_FLAGS) }
ports = { before: 9801, after: 9802 }
connections = { before: CONNECTIONS.first, after: CONNECTIONS.last }
begin
  ports.each { |name, port| wrk(port, 2, connections[name]) } # warm-up
  ratios = Array.new(rounds) do
    cpu = groups.transform_values { |group| Bench::ProcFS.group_cpu_seconds(group) }
    rps = ports.map { |name, port| [name, Thread.new { wrk(port, 5, connections[name]) }] }.to_h.transform_values(&:value)
    us = groups.to_h { |name, group| [name, (Bench::ProcFS.group_cpu_seconds(group) - cpu[name]) / (rps[name] * 5) * 1e6] }
    puts format("before %.0f req/s %.1f us/req | after %.0f req/s %.1f us/req | after/before %.3f, per CPU-second %.3f",
                rps[:before], us[:before], rps[:after], us[:after], rps[:after] / rps[:before], us[:before] / us[:after])
    [rps[:after] / rps[:before], us[:before] / us[:after]]
  end
  median = ->(values) { values.sort[values.size / 2] }
  puts format("median after/before req/s: %.3f; per CPU-second: %.3f", median.(ratios.map(&:first)), median.(ratios.map(&:last)))
ensure
  groups.each_value { |group| Process.kill("TERM", -group) rescue nil }
end
