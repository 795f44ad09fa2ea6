# frozen_string_literal: true

# Counts the CPU instructions Heron spends per hello-world request with profiling off, on, and
# on with one request in ten sampled: the real server (`exe/heron`) runs under valgrind's
# callgrind, four keep-alive connections send N requests, and the count of a run with no
# requests is subtracted. Unlike req/s on a shared VM this barely moves from run to run, so it
# shows small changes to the per-request path; it leaves out the time inside system calls (two
# reads of the thread CPU clock per profiled request, about 0.3 µs each here).
#
#   bundle exec ruby bench/profiler_instructions.rb [--requests 10000] [--only off,on]
#   bundle exec ruby bench/profiler_instructions.rb --demo eager [--requests 20] [--functions 25]
#
# `--demo eager` counts the demo's `/users?eager=1` (1,000 users, 5 queries; about 40 ms of CPU
# a request natively, so 20 requests after 2 warm-up ones, on one connection) instead of the
# hello world. Needs valgrind (apt-get install valgrind). Takes about three minutes (the demo:
# about five for off and on). Writes bench/results/profiler_instructions.md (the demo:
# bench/results/profiler_instructions_eager.md). `--functions N` adds the N functions whose
# instructions per request differ most between each variant and "off", exclusive and inclusive
# (bench/lib/callgrind_diff.rb; needs callgrind_annotate, which comes with valgrind). Not a test.
require "optparse"
require_relative "lib/callgrind_server"
require_relative "lib/callgrind_diff"
require_relative "lib/profiler_variants"

# One measurement session.
class ProfilerInstructionsBench
  ROOT = File.expand_path("..", __dir__)
  # What is served: rackup, request path, results file, connections, warm-up requests, label.
  Target = Struct.new(:rackup, :path, :results, :connections, :warmup, :label)
  TARGETS = {
    "hello" => Target.new(Bench::ProfilerVariants::HELLO, "/", "bench/results/profiler_instructions.md",
                          Bench::CallgrindServer::CONNECTIONS, Bench::CallgrindServer::WARMUP, "hello-world"),
    "eager" => Target.new(File.join(ROOT, "examples/demo/config.ru"), "/users?eager=1",
                          "bench/results/profiler_instructions_eager.md", 1, 2, "demo `/users?eager=1`")
  }.freeze

  # @param requests [Integer] requests per measured run.
  # @param target [String] a key of {TARGETS}.
  # @param only [Array<String>, nil] variant names to run (all when nil).
  # @param functions [Integer, nil] rows of the per-function difference to report (none when nil).
  def initialize(requests, target = "hello", only = nil, functions: nil)
    @requests = requests
    @functions = functions
    @profiles = {}
    @target = TARGETS.fetch(target)
    @variants = Bench::ProfilerVariants::FLAGS.select { |name, _| only.nil? || only.include?(name) }
  end

  # Measures every variant and writes the report.
  # @return [void]
  def run
    system(RbConfig.ruby, File.join(ROOT, "examples/demo/db/setup.rb"), exception: true) if @target.rackup.include?("demo")
    counts = @variants.to_h { |name, flags| [name, per_request(flags)] }
    results = File.join(ROOT, @target.results)
    File.write(results, report(counts) + breakdown)
    puts File.read(results)
  end

  private

  def per_request(flags)
    server = Bench::CallgrindServer.new(app: @target.rackup, flags: flags, request: "GET #{@target.path} HTTP/1.1\r\nHost: bench\r\n\r\n",
                                        connections: @target.connections, warmup: @target.warmup)
    count = server.per_request(@requests)
    @profiles[flags] = server.profiles(@requests)
    count
  end

  def breakdown
    return "" unless @functions && @variants.key?("off")
    base = @profiles.fetch(@variants.fetch("off"))
    @variants.except("off").map { |name, flags| functions_table(name, Bench::CallgrindDiff.new(@profiles.fetch(flags), base, @requests)) }.join
  end

  def functions_table(name, diff)
    [false, true].map do |inclusive|
      rows = diff.top(@functions, inclusive: inclusive).map { |function, added, own| "| `#{function}` | #{format('%+d', added)} | #{own} |" }
      <<~MARKDOWN

        #{name} against off, per request, #{inclusive ? 'inclusive (with callees)' : 'exclusive'}:

        | function | added | off's own |
        |---|---:|---:|
        #{rows.join("\n")}
      MARKDOWN
    end.join
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
      - command: `bundle exec ruby bench/profiler_instructions.rb #{ARGV_TEXT}`
      - server: `exe/heron -e production -q --no-metrics` under `valgrind --tool=callgrind`; #{@target.connections}
        keep-alive connection(s), #{@requests} #{@target.label} requests after #{@target.warmup} warm-up ones, minus a run
        with none. System-call time is not counted.

      | profiling | instructions per request | added |
      |---|---:|---:|
      #{rows.join("\n")}
    MARKDOWN
  end
end

ARGV_TEXT = ARGV.join(" ").freeze
options = { requests: nil, demo: "hello", only: nil, functions: nil }
OptionParser.new do |parser|
  parser.on("--requests N", Integer) { |value| options[:requests] = value }
  parser.on("--demo NAME", %w[eager], "count the demo's /users?eager=1 instead of the hello world") { |value| options[:demo] = value }
  parser.on("--functions N", Integer, "report the N functions that differ most from off") { |value| options[:functions] = value }
  parser.on("--only LIST", Array, "variants among: #{Bench::ProfilerVariants::FLAGS.keys.join(', ')}") { |value| options[:only] = value }
end.parse!
requests = options[:requests] || (options[:demo] == "hello" ? 10_000 : 20)
ProfilerInstructionsBench.new(requests, options[:demo], options[:only], functions: options[:functions]).run
