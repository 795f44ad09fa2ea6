# frozen_string_literal: true

# What one kept-alive request costs the kernel and the process, Heron against Iodine: system
# calls per request (each kind, counted by the kernel's syscall tracepoints through `perf stat`,
# so the count does not depend on the machine's load), and user and system CPU per request
# (/proc). Each server runs alone, pinned to CPU 0 (one process, one thread serving, as in
# bench/run.rb), driven by `wrk -t1 -cN` from CPU 1 for a few seconds after a warm-up; the
# counts are divided by the requests wrk completed.
#
#   bundle exec ruby bench/syscalls.rb [--connections 16] [--seconds 5] [--app bench/hello.ru] [--rounds 2] [--no-peers]
#   RUBY_YJIT_ENABLE=1 bundle exec ruby bench/syscalls.rb        # YJIT on in both servers
#   HERON_ROOT=/path/to/checkout bundle exec ruby bench/syscalls.rb   # another Heron build
#
# Needs wrk, taskset and perf (with tracepoints readable: root or perf_event_paranoid <= 1).
# Iodine comes from bin/setup-bench-peers (Bench::Peers). Not a test: the CPU figures depend on
# the machine; the system calls per request do not.
require "optparse"
require "open3"
require "etc"
require "tmpdir"
require_relative "lib/peers"
require_relative "lib/proc_fs"
require_relative "lib/server_process"
require_relative "lib/results_page"

# One server under one load: its system calls and CPU per request.
class SyscallCount
  ROOT = File.expand_path(ENV.fetch("HERON_ROOT", File.expand_path("..", __dir__)))
  TICKS = Etc.sysconf(Etc::SC_CLK_TCK).to_f

  # @return [Hash{String => Float}] system calls per request, by name.
  attr_reader :calls
  # @return [Float] user and system CPU microseconds per request.
  attr_reader :user_us, :system_us
  # @return [Integer] requests wrk completed in the counted run.
  attr_reader :requests

  # @param name [String] "heron" or "iodine".
  # @param app [String] absolute path of the rackup file.
  # @param connections [Integer]
  # @param seconds [Integer]
  def initialize(name, app, connections, seconds)
    @name = name
    @app = app
    @connections = connections
    @seconds = seconds
  end

  # Starts the server, warms it up, counts one run, stops it.
  # @return [SyscallCount] self
  def measure
    server = start
    wrk(server.port, 2)
    @requests, @calls, cpu = counted(server)
    @user_us, @system_us = cpu.map { |seconds| seconds / @requests * 1e6 }
    self
  ensure
    server&.stop
  end

  # @return [Float] system calls per request, all kinds.
  def total = @calls.values.sum

  private

  def start
    port = Bench::ServerProcess.free_port
    env, argv = command(port)
    server = Bench::ServerProcess.new(["taskset", "-c", "0", *argv], port: port, env: env, chdir: ROOT,
                                                                     log: File.join(Dir.tmpdir, "heron-syscalls-#{@name}.log"))
    server.start(timeout: 60)
    server
  end

  def command(port)
    if @name == "heron"
      [{ "BUNDLE_GEMFILE" => File.join(ROOT, "Gemfile") },
       ["bundle", "exec", "ruby", File.join(ROOT, "exe/heron"), "-e", "production", "-q", "--no-profile",
        "-b", "tcp://127.0.0.1:#{port}", @app]]
    else
      home = Bench::Peers.gem_home or abort "#{@name} is not installed (bin/setup-bench-peers)"
      [Bench::Peers.env(home), Bench::Peers.argv(@name, home, port, @app)]
    end
  end

  # The server's process: Heron's `bundle exec` loads in-process; a peer is started directly.
  def counted(server)
    out = File.join(Dir.tmpdir, "heron-syscalls-#{@name}.perf")
    before = cpu(server.pid)
    perf = Process.spawn("perf", "stat", "-x", ",", "-e", "syscalls:sys_enter_*", "-p", server.pid.to_s, "-o", out,
                         "--", "sleep", (@seconds + 1).to_s, out: File::NULL, err: File::NULL)
    sleep 0.5 # perf attached
    requests = wrk(server.port, @seconds)
    after = cpu(server.pid)
    Process.wait(perf)
    [requests, per_request(File.read(out), requests), after.zip(before).map { |a, b| a - b }]
  end

  def per_request(text, requests)
    text.each_line.filter_map do |line|
      count, _unit, event = line.split(",")
      next unless event&.start_with?("syscalls:sys_enter_") && count.to_i.positive?
      [event.delete_prefix("syscalls:sys_enter_"), count.to_f / requests]
    end.to_h
  end

  def cpu(pid)
    fields = Bench::ProcFS.stat(pid)
    [fields[11].to_f / TICKS, fields[12].to_f / TICKS]
  end

  def wrk(port, seconds)
    out, = Open3.capture2("taskset", "-c", "1", "wrk", "-t1", "-c#{@connections}", "-d#{seconds}s", "http://127.0.0.1:#{port}/")
    out[/(\d+) requests in/, 1].to_i
  end
end

options = { connections: 16, seconds: 5, app: "bench/hello.ru", rounds: 2, peers: true }
OptionParser.new do |o|
  o.on("--connections N", Integer) { |n| options[:connections] = n }
  o.on("--seconds N", Integer) { |n| options[:seconds] = n }
  o.on("--app PATH") { |path| options[:app] = path }
  o.on("--rounds N", Integer) { |n| options[:rounds] = n }
  o.on("--[no-]peers", "also Iodine (default)") { |value| options[:peers] = value }
end.parse!
Bench::ResultsPage.capture("syscalls.md")

app = File.expand_path(options[:app], File.expand_path("..", __dir__))
names = options[:peers] ? %w[heron iodine] : %w[heron]
commit = `git -C #{SyscallCount::ROOT} rev-parse --short HEAD`.strip
puts "Heron #{commit} (#{SyscallCount::ROOT}), #{File.basename(app)}, wrk -t1 -c#{options[:connections]} " \
     "#{options[:seconds]} s per run, YJIT #{ENV['RUBY_YJIT_ENABLE'] == '1' ? 'on' : 'off'}, #{options[:rounds]} rounds"
runs = Array.new(options[:rounds]) { names.to_h { |name| [name, SyscallCount.new(name, app, options[:connections], options[:seconds]).measure] } }
kinds = runs.flat_map { |round| round.values.flat_map { |run| run.calls.select { |_, n| n >= 0.005 }.keys } }.uniq.sort
puts
puts "| per request | #{runs.each_index.flat_map { |i| names.map { |name| "#{name} (#{i + 1})" } }.join(' | ')} |"
puts "|---|#{'---:|' * (runs.size * names.size)}"
cells = ->(&block) { runs.flat_map { |round| names.map { |name| block.call(round[name]) } }.join(" | ") }
puts "| requests counted | #{cells.call { |run| run.requests }} |"
kinds.each { |kind| puts "| #{kind} | #{cells.call { |run| format('%.3f', run.calls.fetch(kind, 0)) }} |" }
puts "| **all system calls** | #{cells.call { |run| format('**%.2f**', run.total) }} |"
puts "| user CPU µs | #{cells.call { |run| format('%.2f', run.user_us) }} |"
puts "| system CPU µs | #{cells.call { |run| format('%.2f', run.system_us) }} |"
puts "| requests per CPU-second | #{cells.call { |run| format('%.0f', 1e6 / (run.user_us + run.system_us)) }} |"
