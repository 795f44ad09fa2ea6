# frozen_string_literal: true

# Counts the CPU instructions Heron spends per hello-world request with profiling off, on, and
# on with one request in ten sampled: the real server (`exe/heron`) runs under valgrind's
# callgrind, four keep-alive connections send N requests, and the count of a run with no
# requests is subtracted. Unlike req/s on a shared VM this barely moves from run to run, so it
# shows small changes to the per-request path; it leaves out the time inside system calls (two
# reads of the thread CPU clock per profiled request, about 0.3 µs each here).
#
#   bundle exec ruby bench/profiler_instructions.rb [--requests 10000]
#
# Needs valgrind (apt-get install valgrind). Takes about three minutes. Writes
# bench/results/profiler_instructions.md. Not a test.
require "optparse"
require_relative "lib/callgrind_server"
require_relative "lib/profiler_variants"

# One measurement session.
class ProfilerInstructionsBench
  ROOT = File.expand_path("..", __dir__)
  RESULTS = File.join(ROOT, "bench/results/profiler_instructions.md")
  CONNECTIONS = Bench::CallgrindServer::CONNECTIONS
  VARIANTS = Bench::ProfilerVariants::FLAGS

  # @param requests [Integer] requests per measured run.
  def initialize(requests)
    @requests = requests
  end

  # Measures every variant and writes the report.
  # @return [void]
  def run
    counts = VARIANTS.to_h { |name, flags| [name, per_request(flags)] }
    File.write(RESULTS, report(counts))
    puts File.read(RESULTS)
  end

  private

  def per_request(flags)
    Bench::CallgrindServer.new(app: Bench::ProfilerVariants::HELLO, flags: flags).per_request(@requests)
  end

  def report(counts)
    off = counts.fetch("off")
    rows = counts.map do |name, count|
      added = name == "off" ? "" : format("%+.1f%%", (count - off) * 100.0 / off)
      "| #{name} | #{count} | #{added} |"
    end
    <<~MARKDOWN
      # Profiler cost in instructions

      - date: #{Time.now.utc.strftime('%Y-%m-%d %H:%M UTC')}, #{RUBY_DESCRIPTION}
      - command: `bundle exec ruby bench/profiler_instructions.rb --requests #{@requests}`
      - server: `exe/heron -e production -q --no-metrics` under `valgrind --tool=callgrind`; #{CONNECTIONS}
        keep-alive connections, #{@requests} hello-world requests after 200 warm-up ones, minus a run
        with none. System-call time is not counted.

      | profiling | instructions per request | added |
      |---|---:|---:|
      #{rows.join("\n")}
    MARKDOWN
  end
end

requests = 10_000
OptionParser.new { |parser| parser.on("--requests N", Integer) { |value| requests = value } }.parse!
ProfilerInstructionsBench.new(requests).run
