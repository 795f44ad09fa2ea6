# frozen_string_literal: true

# Measures what Heron's per-request profiler costs: the same app served by the real server
# (`exe/heron`, one process, one reactor thread) with --no-profile, with --profile, and with
# --profile --profile-sample 10 (one request in ten measured). Starts one
# server per variant and runs wrk against each in turn, round after round (the machine may be
# shared, so each round is compared with its own profiling-off run), and
# writes bench/results/profiler_overhead.md. Two numbers per run: req/s as wrk saw it, and the
# server process's CPU time per request (from /proc), which other load on a shared machine
# disturbs much less.
#
#   bundle exec ruby bench/profiler_overhead.rb [--rounds 5] [--duration 5] [--connections 16]
#                                               [--only hello,users,eager]
#
# Needs wrk. Not a test: numbers depend on the machine.
require "optparse"
require "tmpdir"
require "rbconfig"
require "etc"
require_relative "lib/server_process"
require_relative "lib/wrk"
require_relative "lib/profiler_variants"

# Runs one benchmark session: the endpoints, the variants and the report.
class ProfilerOverheadBench
  ROOT = File.expand_path("..", __dir__)
  RESULTS = File.join(ROOT, "bench/results/profiler_overhead.md")
  VARIANTS = Bench::ProfilerVariants::FLAGS
  MEASURED = VARIANTS.keys.drop(1).freeze

  # @param options [Hash] rounds, duration, connections.
  def initialize(options)
    @options = options
    @dir = Dir.mktmpdir("heron-bench")
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
    all = { "hello" => ["hello world (`/`, bare lambda)", Bench::ProfilerVariants::HELLO, "/", @options[:connections]],
            "users" => ["demo `/users` (1,000 users, N+1: 4 queries a user)", demo, "/users", 2],
            "eager" => ["demo `/users?eager=1` (1,000 users, 5 queries)", demo, "/users?eager=1", 2] }
    all.values_at(*@options[:only]).to_h { |name, *rest| [name, rest] }
  end

  # Starts one server per variant, then runs wrk against each in turn, round after round (the
  # order rotating), so slow drifts of a shared machine hit every variant alike. "lost" and
  # "added" are medians of each round's ratio to the profiling-off run next to it.
  def measure(rackup, path, connections)
    servers = VARIANTS.keys.to_h { |variant| [variant, start(variant, rackup)] }
    servers.each_value { |server| wrk(server, path, connections, 2) }
    rounds = Array.new(@options[:rounds]) do |round|
      VARIANTS.keys.rotate(round).to_h { |variant| [variant, wrk(servers.fetch(variant), path, connections)] }
    end
    summary(rounds)
  ensure
    servers&.each_value(&:stop)
  end

  # @return [Hash{String => Hash}] per variant: median req/s and µs/request, and the medians of
  #   the per-round share of req/s lost and of CPU added against profiling off.
  def summary(rounds)
    VARIANTS.keys.to_h do |variant|
      pairs = rounds.map { |round| [round.fetch("off"), round.fetch(variant)] }
      [variant, { rate: median(pairs.map { |_, (rate, _)| rate }), cpu: median(pairs.map { |_, (_, cpu)| cpu }),
                  lost: median(pairs.map { |(off, _), (rate, _)| (off - rate) / off }),
                  losses: pairs.map { |(off, _), (rate, _)| (off - rate) / off },
                  added: median(pairs.map { |(_, off), (_, cpu)| (cpu - off) / off }) }]
    end
  end

  def median(values)
    values.sort[values.size / 2]
  end

  def start(variant, rackup)
    port = Bench::ServerProcess.free_port
    argv = [RbConfig.ruby, "-rbundler/setup", "-I", File.join(ROOT, "lib"), File.join(ROOT, "exe/heron"), "-p", port.to_s,
            "-o", "127.0.0.1", "-e", "production", "-q", "--no-metrics", *VARIANTS.fetch(variant), rackup]
    Bench::ServerProcess.new(argv, port: port, log: File.join(@dir, "server.log"), chdir: ROOT).start
  end

  # @return [Array(Float, Float)] req/s, and the server's CPU µs per request.
  def wrk(server, path, connections, duration = @options[:duration])
    result = Bench::Wrk.run(server.url(path), server: server, connections: connections, seconds: duration, threads: 1,
                                              timeout: 60)
    return [0.0, Float::NAN] if result.requests.zero?
    [result.rps, result.server_cpu_s / result.requests * 1e6]
  end

  def report(rows)
    <<~MARKDOWN
      # Profiler overhead

      - date: #{Time.now.utc.strftime('%Y-%m-%d %H:%M UTC')}
      - machine: #{machine}
      - command: `bundle exec ruby bench/profiler_overhead.rb --rounds #{@options[:rounds]} --duration #{@options[:duration]} --connections #{@options[:connections]}`
      - server: `exe/heron -e production -q --no-metrics --[no-]profile` (one process, one reactor thread);
        load: `wrk -t1 -c<connections> -d#{@options[:duration]}s --timeout 60s` after a 2 s warm-up
        (hello world: #{@options[:connections]} connections; /users: 2); #{@options[:rounds]} rounds, each running wrk
        against every variant in turn (rotating order) on servers started once; req/s and µs are medians,
        "lost" and "added" are medians of each round's ratio to its own profiling-off run
      - "1 in 10 sampled": `--profile --profile-sample 10`, every tenth request measured

      Throughput (wrk's req/s; "lost" is the share of the profiling-off rate):

      | endpoint | off req/s | on req/s | lost | 1 in 10 sampled req/s | lost |
      |---|---:|---:|---:|---:|---:|
      #{rows.map { |name, values| row(name, values) }.join("\n")}

      Each round's share lost, in round order (the spread shows how noisy the machine was):

      #{rows.map { |name, values| spread(name, values) }.join("\n")}

      Server CPU per request (µs; "added" is relative to profiling off; a CPU-bound server loses
      about added / (100% + added) of its throughput):

      | endpoint | off µs/req | on µs/req | added | 1 in 10 sampled µs/req | added |
      |---|---:|---:|---:|---:|---:|
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
    cpu = File.read("/proc/cpuinfo")[/model name\s*:\s*(.+)/, 1] rescue "unknown CPU"
    "#{cpu}, #{Etc.nprocessors} cores, #{`uname -sr`.strip}, #{RUBY_DESCRIPTION}, " \
      "load average at start #{File.read('/proc/loadavg').split.first(3).join(' ')} (shared machine)"
  end
end

options = { rounds: 5, duration: 5, connections: 16, only: %w[hello users eager] }
OptionParser.new do |parser|
  parser.on("--rounds N", Integer) { |value| options[:rounds] = value }
  parser.on("--duration SECONDS", Integer) { |value| options[:duration] = value }
  parser.on("--connections N", Integer) { |value| options[:connections] = value }
  parser.on("--only LIST", Array, "endpoints among hello,users,eager") { |value| options[:only] = value }
end.parse!
ProfilerOverheadBench.new(options).run
