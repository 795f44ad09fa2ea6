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
#
# Prints each round (req/s and server CPU per request of both) and the median after/before.
# Not a test: numbers depend on the machine. Needs wrk, taskset and chrt.
before, after, rounds, app = ARGV
abort "usage: #{$PROGRAM_NAME} BEFORE_DIR AFTER_DIR [ROUNDS] [APP.ru]" unless before && after
rounds = Integer(rounds || 5)
FLAGS = ENV.fetch("HERON_AB_FLAGS", "--no-profile").split # e.g. "--profile --no-metrics" to compare profiled builds
AFTER_FLAGS = ENV.fetch("HERON_AB_AFTER_FLAGS", "").split
CONNECTIONS = ENV.fetch("HERON_AB_CONNECTIONS", "16").split(",").map { |count| Integer(count) }
app = File.expand_path(app || File.join(__dir__, "hello.ru"))

def start(dir, port, app, flags = FLAGS)
  log = "/tmp/heron-ab-#{port}.log"
  pid = Process.spawn({ "BUNDLE_GEMFILE" => File.join(dir, "Gemfile") }, "taskset", "-c", "0", "chrt", "-b", "0",
                      "bundle", "exec", "ruby", File.join(dir, "exe/heron"), "-e", "production", "-q", *flags,
                      "-b", "tcp://127.0.0.1:#{port}", app, chdir: dir, out: log, err: [:child, :out], pgroup: true)
  100.times { break if File.exist?(log) && File.read(log).include?("Listening"); sleep 0.2 }
  pid
end

def server_pid(group) = `pgrep -g #{group}`.split.map(&:to_i).find { |pid| File.read("/proc/#{pid}/comm").start_with?("ruby") } || group
def cpu_seconds(pid) = File.read("/proc/#{pid}/stat").split[13, 2].sum(&:to_i) / 100.0
def wrk(port, seconds, connections) = `taskset -c 1 wrk -t1 -c#{connections} -d#{seconds}s http://127.0.0.1:#{port}/`[/Requests\/sec:\s+([\d.]+)/, 1].to_f

groups = { before: start(before, 9801, app), after: start(after, 9802, app, FLAGS + AFTER_FLAGS) }
ports = { before: 9801, after: 9802 }
connections = { before: CONNECTIONS.first, after: CONNECTIONS.last }
begin
  pids = groups.transform_values { |group| server_pid(group) }
  ports.each { |name, port| wrk(port, 2, connections[name]) } # warm-up
  ratios = Array.new(rounds) do
    cpu = pids.transform_values { |pid| cpu_seconds(pid) }
    rps = ports.map { |name, port| [name, Thread.new { wrk(port, 5, connections[name]) }] }.to_h.transform_values(&:value)
    us = pids.to_h { |name, pid| [name, (cpu_seconds(pid) - cpu[name]) / (rps[name] * 5) * 1e6] }
    puts format("before %.0f req/s %.1f us/req | after %.0f req/s %.1f us/req | after/before %.3f",
                rps[:before], us[:before], rps[:after], us[:after], rps[:after] / rps[:before])
    rps[:after] / rps[:before]
  end
  puts format("median after/before req/s: %.3f", ratios.sort[ratios.size / 2])
ensure
  groups.each_value { |group| Process.kill("TERM", -group) rescue nil }
end
