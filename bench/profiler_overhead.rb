# frozen_string_literal: true

# Measures what Heron's per-request profiler costs: the same app served by the real server
# (`exe/heron`, one process, one reactor thread) with --no-profile, with --profile, and with
# --profile --profile-sample 10 (one request in ten measured), plus a second --no-profile server
# as a control. Writes bench/results/profiler_overhead.md.
#
# Each variant runs side by side with the profiling-off server: both pinned to CPU 0 as
# SCHED_BATCH, with one wrk each running at the same time from CPU 1. Sharing one CPU, the two
# get the same CPU time, so the ratio of their req/s is the ratio of their cost per request;
# and whatever else a shared machine is doing (other VMs take this one's CPU for seconds at a
# time) slows both alike. Run one after another instead, the same server's req/s moved by 30%
# between 5 s runs here, more than the difference being measured. The control shows what is
# left of the noise: its "lost" should be near 0.
#
#   bundle exec ruby bench/profiler_overhead.rb [--rounds 5] [--duration 5] [--demo-duration 20]
#                                               [--connections 16] [--only hello,users,eager]
#
# Needs wrk, and taskset with two CPUs for the pinning (else the servers share all CPUs).
# Not a test: numbers depend on the machine.
require "optparse"
require "tmpdir"
require "rbconfig"
require "etc"
require_relative "lib/server_process"
require_relative "lib/wrk"
require_relative "lib/profiler_variants"
require_relative "lib/proc_fs"

# Runs one benchmark session: the endpoints, the variants and the report.
class ProfilerOverheadBench
  ROOT = File.expand_path("..", __dir__)
  RESULTS = File.join(ROOT, "bench/results/profiler_overhead.md")
  VARIANTS = { "off" => ["--no-profile"], "off, control" => ["--no-profile"] }.merge(Bench::ProfilerVariants::FLAGS.drop(1).to_h).freeze
  MEASURED = VARIANTS.keys.drop(1).freeze
  SERVER_CPU = 0
  WRK_CPU = 1

  # @param options [Hash] rounds, duration, demo_duration, connections, only.
  def initialize(options)
    @options = options
    @dir = Dir.mktmpdir("heron-bench")
  end

  # Runs everything and writes the report.
  # @return [void]
  def run
    system(RbConfig.ruby, File.join(ROOT, "examples/demo/db/setup.rb"), exception: true)
    rows = endpoints.map { |name, (rackup, path, connections, duration)| [name, measure(rackup, path, connections, duration)] }
    File.write(RESULTS, report(rows))
    puts File.read(RESULTS)
  end

  private

  def endpoints
    demo = File.join(ROOT, "examples/demo/config.ru")
    slow = @options[:demo_duration]
    all = { "hello" => ["hello world (`/`, bare lambda)", Bench::ProfilerVariants::HELLO, "/", @options[:connections],
                        @options[:duration]],
            "users" => ["demo `/users` (1,000 users, N+1: 4 queries a user)", demo, "/users", 2, slow],
            "eager" => ["demo `/users?eager=1` (1,000 users, 5 queries)", demo, "/users?eager=1", 2, slow] }
    all.values_at(*@options[:only]).to_h { |name, *rest| [name, rest] }
  end

  # Starts one server per variant, all pinned to one CPU. Each round then runs wrk against the
  # profiling-off server and one other at the same time, for each other variant in turn (the
  # order rotating), while the rest stay idle. "lost" and "added" are medians of each pair's
  # ratio to its profiling-off half.
  def measure(rackup, path, connections, duration)
    servers = VARIANTS.keys.to_h { |variant| [variant, start(variant, rackup)] }
    servers.each_value { |server| server.pin(SERVER_CPU) } if pinned?
    together(servers, path, connections, 2)
    summary(Array.new(@options[:rounds]) { |round| MEASURED.rotate(round).to_h { |variant| pair(servers, variant, path, connections, duration) } })
  ensure
    servers&.each_value(&:stop)
  end

  # Runs the profiling-off server and `variant`'s side by side.
  # @return [Array(String, Hash)] the variant, and what #together returns for the two.
  def pair(servers, variant, path, connections, duration)
    [variant, together(servers.slice("off", variant), path, connections, duration)]
  end

  # Runs one wrk per server, all at the same time.
  # @return [Hash{String => Array(Float, Float)}] per variant, what #wrk returns.
  def together(servers, path, connections, duration)
    threads = servers.to_h { |variant, server| [variant, Thread.new { wrk(server, path, connections, duration) }] }
    threads.transform_values(&:value)
  end

  # SCHED_BATCH (chrt -b 0): a server woken by a request does not preempt the other one of its
  # pair, so the two take turns in whole time slices rather than switching every few requests,
  # and each costs per request what it costs alone.
  def batch
    @batch = system("chrt", "-b", "0", "true", err: File::NULL) ? %w[chrt -b 0] : [] if @batch.nil?
    @batch
  end

  def pinned?
    @pinned = Etc.nprocessors >= 2 && system("taskset", "-c", "0", "true", err: File::NULL) if @pinned.nil?
    @pinned
  end

  # @param rounds [Array<Hash{String => Hash}>] per round, per measured variant, its pair's results.
  # @return [Hash{String => Hash}] per variant: median req/s and µs/request, and the medians of
  #   the per-pair share of req/s lost and of CPU added against profiling off.
  def summary(rounds)
    pairs = MEASURED.to_h { |variant| [variant, rounds.map { |round| round.fetch(variant).values_at("off", variant) }] }
    offs = pairs.values.flatten(1).map(&:first)
    { "off" => { rate: median(offs.map(&:first)), cpu: median(offs.map(&:last)) } }.merge(pairs.to_h { |variant, list| [variant, versus(list)] })
  end

  # Medians of one variant's pairs: [[off, variant], ...], each [req/s, µs/request].
  def versus(list)
    losses = list.map { |(off, _), (rate, _)| (off - rate) / off }
    added_us = list.map { |(_, off), (_, cpu)| cpu - off }
    { rate: median(list.map { |_, (rate, _)| rate }), cpu: median(list.map { |_, (_, cpu)| cpu }), lost: median(losses),
      losses: losses, added: median(list.map { |(_, off), (_, cpu)| (cpu - off) / off }), added_us: added_us }
  end

  def median(values)
    values.sort[values.size / 2]
  end

  def start(variant, rackup)
    port = Bench::ServerProcess.free_port
    argv = [*batch, RbConfig.ruby, "-rbundler/setup", "-I", File.join(ROOT, "lib"), File.join(ROOT, "exe/heron"), "-p", port.to_s,
            "-o", "127.0.0.1", "-e", "production", "-q", "--no-metrics", *VARIANTS.fetch(variant), rackup]
    Bench::ServerProcess.new(argv, port: port, log: File.join(@dir, "server.log"), chdir: ROOT).start
  end

  # @return [Array(Float, Float)] req/s, and the server's CPU µs per request.
  def wrk(server, path, connections, duration)
    result = Bench::Wrk.run(server.url(path), server: server, connections: connections, seconds: duration, threads: 1,
                                              timeout: 60, cpu: pinned? ? WRK_CPU : nil)
    return [0.0, Float::NAN] if result.requests.zero?
    [result.rps, result.server_cpu_s / result.requests * 1e6]
  end

  def report(rows)
    <<~MARKDOWN
      # Profiler overhead

      - date: #{Time.now.utc.strftime('%Y-%m-%d %H:%M UTC')}
      - machine: #{machine}
      - command: `bundle exec ruby bench/profiler_overhead.rb --rounds #{@options[:rounds]} --duration #{@options[:duration]} --demo-duration #{@options[:demo_duration]} --connections #{@options[:connections]} --only #{@options[:only].join(',')}`
      - servers: `exe/heron -e production -q --no-metrics --[no-]profile` (one process, one reactor thread
        each), started once, #{pinned? ? "all pinned to CPU #{SERVER_CPU}" : 'unpinned (no taskset or one CPU)'}; each round runs the profiling-off
        server side by side with each other one in turn: one `wrk -t1 -c<connections> -d#{@options[:duration]}s --timeout 60s` per
        server of the pair, both at once#{pinned? ? " from CPU #{WRK_CPU}" : ''} (hello world: #{@options[:connections]} connections; demo: 2
        connections, #{@options[:demo_duration]} s runs);
        #{batch.empty? ? 'no chrt: the servers run under the default scheduling policy' : 'the servers run as SCHED_BATCH (`chrt -b 0`), so the two of a pair take turns in whole time slices'};
        a 2 s warm-up, then #{@options[:rounds]} rounds
      - sharing one CPU, the two servers of a pair get the same CPU time: the ratio of their req/s is the
        ratio of their cost per request, and other load on the machine slows both alike. req/s and µs are
        medians; "lost" and "added" are medians of each pair's ratio to its profiling-off half
      - "off, control": a second profiling-off server; its "lost" is the method's noise
      - "1 in 10 sampled": `--profile --profile-sample 10`, every tenth request measured

      Throughput (wrk's req/s; "lost" is the share of the profiling-off server's rate):

      | endpoint | off req/s | #{MEASURED.map { |variant| "#{variant} req/s | lost" }.join(' | ')} |
      |---|---:|#{'---:|---:|' * MEASURED.size}
      #{rows.map { |name, values| row(name, values) }.join("\n")}

      Each round's share lost, in round order:

      #{rows.map { |name, values| spread(name, values) }.join("\n")}

      Server CPU µs added per request, each round's pair (the variant's µs/request minus its profiling-off
      half's), in round order, with the median:

      #{rows.map { |name, values| added_us(name, values) }.join("\n")}

      Server CPU per request (µs, from /proc; "added" is relative to profiling off):

      | endpoint | off µs/req | #{MEASURED.map { |variant| "#{variant} µs/req | added" }.join(' | ')} |
      |---|---:|#{'---:|---:|' * MEASURED.size}
      #{rows.map { |name, values| cpu_row(name, values) }.join("\n")}
    MARKDOWN
  end

  def row(name, values)
    cells = MEASURED.map { |variant| [rate_text(values[variant][:rate]), percent(values[variant][:lost])] }
    "| #{name} | #{rate_text(values['off'][:rate])} | #{cells.flatten.join(' | ')} |"
  end

  def spread(name, values)
    lists = MEASURED.map { |variant| "#{variant}: #{values[variant][:losses].map { |share| percent(share) }.join(', ')}" }
    "- #{name}: #{lists.join('; ')}"
  end

  def added_us(name, values)
    lists = MEASURED.map do |variant|
      rounds = values[variant][:added_us]
      "#{variant}: #{rounds.map { |us| format('%+.1f', us) }.join(', ')} (median #{format('%+.1f', median(rounds))})"
    end
    "- #{name}: #{lists.join('; ')}"
  end

  def cpu_row(name, values)
    cells = MEASURED.map { |variant| [values[variant][:cpu].round(1), percent(values[variant][:added], "%+.1f%%")] }
    "| #{name} | #{values['off'][:cpu].round(1)} | #{cells.flatten.join(' | ')} |"
  end

  def percent(share, format = "%.1f%%")
    share.finite? ? format(format, share * 100) : "n/a"
  end

  def rate_text(rate)
    rate >= 100 ? rate.round.to_s : format("%.2f", rate)
  end

  def machine
    cpu = Bench::ProcFS.cpu_model rescue "unknown CPU"
    "#{cpu}, #{Etc.nprocessors} cores, #{`uname -sr`.strip}, #{RUBY_DESCRIPTION}, " \
      "load average at start #{Bench::ProcFS.load_averages.join(' ')} (shared machine)"
  end
end

options = { rounds: 5, duration: 5, demo_duration: 20, connections: 16, only: %w[hello users eager] }
OptionParser.new do |parser|
  parser.on("--rounds N", Integer) { |value| options[:rounds] = value }
  parser.on("--duration SECONDS", Integer, "each wrk run on the hello world") { |value| options[:duration] = value }
  parser.on("--demo-duration SECONDS", Integer, "each wrk run on the demo (about 1 req/s on /users)") { |value| options[:demo_duration] = value }
  parser.on("--connections N", Integer) { |value| options[:connections] = value }
  parser.on("--only LIST", Array, "endpoints among hello,users,eager") { |value| options[:only] = value }
end.parse!
ProfilerOverheadBench.new(options).run
