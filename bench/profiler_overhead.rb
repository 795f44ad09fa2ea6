# frozen_string_literal: true

# Measures what Heron's per-request profiler costs: the same app served by the real server
# (`exe/heron`, one process, one reactor thread) with --no-profile and with --profile, and with
# --profile but the fiber-switch TracePoint stubbed out (to see its own share). Runs the
# variants in alternating rounds (the machine may be shared), keeps the median of each, and
# writes bench/results/profiler_overhead.md. Two numbers per run: req/s as wrk saw it, and the
# server process's CPU time per request (from /proc), which other load on a shared machine
# disturbs much less.
#
#   bundle exec ruby bench/profiler_overhead.rb [--rounds 5] [--duration 5] [--connections 16]
#
# Needs wrk. Not a test: numbers depend on the machine.
require "optparse"
require "socket"
require "tmpdir"
require "rbconfig"
require "etc"

# Runs one benchmark session: the endpoints, the variants and the report.
class ProfilerOverheadBench
  ROOT = File.expand_path("..", __dir__)
  RESULTS = File.join(ROOT, "bench/results/profiler_overhead.md")
  HELLO = %(run ->(_env) { [200, { "content-type" => "text/plain" }, ["Hello, world!\\n"]] }\n)
  NO_TRACEPOINT = <<~RUBY
    require "heron/profiler"
    Heron::Profiler::FiberAccounting.prepend(Module.new { def open(profile) = (attach(profile); profile) })
  RUBY
  VARIANTS = { "off" => ["--no-profile"], "on" => ["--profile"], "on, no TracePoint" => ["--profile"] }.freeze

  # @param options [Hash] rounds, duration, connections.
  def initialize(options)
    @options = options
    @dir = Dir.mktmpdir("heron-bench")
    File.write(File.join(@dir, "hello.ru"), HELLO)
    File.write(File.join(@dir, "no_tracepoint.rb"), NO_TRACEPOINT)
  end

  # Runs everything and writes the report.
  # @return [void]
  def run
    system(RbConfig.ruby, File.join(ROOT, "examples/demo/db/setup.rb"), exception: true)
    rows = endpoints.map { |name, (rackup, path, connections)| [name, measure(rackup, path, connections)] }
    File.write(RESULTS, report(rows))
    puts File.read(RESULTS)
  end

  private

  def endpoints
    demo = File.join(ROOT, "examples/demo/config.ru")
    { "hello world (`/`, bare lambda)" => [File.join(@dir, "hello.ru"), "/", @options[:connections]],
      "demo `/users` (1,000 users, N+1: 4 queries a user)" => [demo, "/users", 2],
      "demo `/users?eager=1` (1,000 users, 5 queries)" => [demo, "/users?eager=1", 2] }
  end

  def measure(rackup, path, connections)
    samples = Hash.new { |hash, key| hash[key] = [] }
    @options[:rounds].times do
      VARIANTS.each_key do |variant|
        samples[variant] << serve(variant, rackup) { |port, pid| wrk(port, pid, path, connections) }
      end
    end
    samples.transform_values { |runs| [median(runs.map(&:first)), median(runs.map(&:last))] }
  end

  def median(values)
    values.sort[values.size / 2]
  end

  def serve(variant, rackup)
    port = free_port
    pid = spawn(*server_command(variant, rackup, port), chdir: ROOT, out: File::NULL, err: File.join(@dir, "server.log"))
    wait_for(port)
    yield port, pid
  ensure
    Process.kill("TERM", pid) if pid
    Process.wait(pid) if pid
  end

  def server_command(variant, rackup, port)
    preload = variant.include?("no TracePoint") ? ["-r", File.join(@dir, "no_tracepoint.rb")] : []
    [RbConfig.ruby, "-rbundler/setup", "-I", File.join(ROOT, "lib"), *preload, File.join(ROOT, "exe/heron"),
     "-p", port.to_s, "-o", "127.0.0.1", "-e", "production", "-q", "--no-metrics", *VARIANTS.fetch(variant), rackup]
  end

  # @return [Array(Float, Float)] req/s, and the server's CPU µs per request.
  def wrk(port, pid, path, connections)
    url = "http://127.0.0.1:#{port}#{path}"
    `wrk -t1 -c#{connections} -d1s --timeout 60s #{url}`
    cpu = cpu_seconds(pid)
    output = `wrk -t1 -c#{connections} -d#{@options[:duration]}s --timeout 60s #{url}`
    cpu = cpu_seconds(pid) - cpu
    requests, seconds = output.match(/(\d+) requests in ([\d.]+)s/)&.captures&.map(&:to_f)
    requests ? [requests / seconds, cpu / requests * 1e6] : [0.0, Float::NAN]
  end

  def cpu_seconds(pid)
    fields = File.read("/proc/#{pid}/stat").split(") ").last.split
    (fields[11].to_i + fields[12].to_i) / Etc.sysconf(Etc::SC_CLK_TCK).to_f
  end

  def wait_for(port, timeout = 20)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
    begin
      TCPSocket.new("127.0.0.1", port).close
    rescue SystemCallError
      raise "server did not start; see #{@dir}/server.log" if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      sleep 0.1
      retry
    end
  end

  def free_port
    server = TCPServer.new("127.0.0.1", 0)
    server.addr[1]
  ensure
    server&.close
  end

  def report(rows)
    <<~MARKDOWN
      # Profiler overhead

      - date: #{Time.now.utc.strftime('%Y-%m-%d %H:%M UTC')}
      - machine: #{machine}
      - command: `bundle exec ruby bench/profiler_overhead.rb --rounds #{@options[:rounds]} --duration #{@options[:duration]} --connections #{@options[:connections]}`
      - server: `exe/heron -e production -q --no-metrics --[no-]profile` (one process, one reactor thread);
        load: `wrk -t1 -c<connections> -d#{@options[:duration]}s --timeout 60s` after a 1 s warm-up
        (hello world: #{@options[:connections]} connections; /users: 2); median of #{@options[:rounds]} alternating rounds
      - "on, no TracePoint": profiling on with the fiber-switch TracePoint never enabled (its own cost)

      Throughput (wrk's req/s; "lost" is the share of the profiling-off rate):

      | endpoint | off req/s | on req/s | lost | on, no TracePoint req/s | lost |
      |---|---:|---:|---:|---:|---:|
      #{rows.map { |name, values| row(name, values.transform_values(&:first)) }.join("\n")}

      Server CPU per request (µs; "added" is relative to profiling off; a CPU-bound server loses
      about added / (100% + added) of its throughput):

      | endpoint | off µs/req | on µs/req | added | on, no TracePoint µs/req | added |
      |---|---:|---:|---:|---:|---:|
      #{rows.map { |name, values| cpu_row(name, values.transform_values(&:last)) }.join("\n")}
    MARKDOWN
  end

  def row(name, values)
    off = values["off"]
    cells = [values["on"], values["on, no TracePoint"]].map { |rate| [rate_text(rate), lost(off, rate)] }.flatten
    "| #{name} | #{rate_text(off)} | #{cells.join(' | ')} |"
  end

  def cpu_row(name, values)
    off = values["off"]
    cells = [values["on"], values["on, no TracePoint"]].map { |cpu| [cpu.round(1), added(off, cpu)] }.flatten
    "| #{name} | #{off.round(1)} | #{cells.join(' | ')} |"
  end

  def added(off, cpu)
    format("%+.1f%%", (cpu - off) / off * 100)
  end

  def rate_text(rate)
    rate >= 100 ? rate.round.to_s : format("%.2f", rate)
  end

  def lost(off, rate)
    off.positive? ? format("%.1f%%", (off - rate) / off * 100) : "n/a"
  end

  def machine
    cpu = File.read("/proc/cpuinfo")[/model name\s*:\s*(.+)/, 1] rescue "unknown CPU"
    "#{cpu}, #{Etc.nprocessors} cores, #{`uname -sr`.strip}, #{RUBY_DESCRIPTION}, " \
      "load average at start #{File.read('/proc/loadavg').split.first(3).join(' ')} (shared machine)"
  end
end

options = { rounds: 5, duration: 5, connections: 16 }
OptionParser.new do |parser|
  parser.on("--rounds N", Integer) { |value| options[:rounds] = value }
  parser.on("--duration SECONDS", Integer) { |value| options[:duration] = value }
  parser.on("--connections N", Integer) { |value| options[:connections] = value }
end.parse!
ProfilerOverheadBench.new(options).run
