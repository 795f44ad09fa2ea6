# frozen_string_literal: true

# The regression guard for the per-request path: CPU instructions per hello-world and per JSON
# request (bench/hello.ru, bench/json.ru) with profiling off, counted under callgrind
# (Bench::CallgrindServer: a warm server, N requests on four keep-alive connections, minus a run
# with none). The count is the same from run to run for the same build and input, so a change of
# a few hundred instructions shows, where req/s on a shared machine moves by a third. Appends one
# row to bench/results/instructions.md; run it with each change that touches the request path.
#
#   bundle exec ruby bench/instructions.rb [--requests 10000] [--note "what changed"] [--keep DIR]
#
# --keep copies the callgrind profiles of the measured runs into DIR, for
# `callgrind_annotate --inclusive=yes DIR/hello.out`. Needs valgrind. About three minutes.
require "optparse"
require "fileutils"
require_relative "lib/callgrind_server"

# One measurement: both apps, one row.
class InstructionsBench
  ROOT = File.expand_path("..", __dir__)
  RESULTS = File.join(ROOT, "bench/results/instructions.md")
  APPS = { "hello" => "bench/hello.ru", "json" => "bench/json.ru" }.freeze

  # @param requests [Integer] requests per measured run.
  # @param note [String] what the row measures (the change).
  # @param keep [String, nil] directory for the callgrind profiles.
  def initialize(requests:, note:, keep:)
    @requests = requests
    @note = note
    @keep = keep
  end

  # Measures both apps and appends the row.
  # @return [void]
  def run
    counts = APPS.to_h { |name, app| [name, measure(name, app)] }
    File.write(RESULTS, header) unless File.exist?(RESULTS)
    File.write(RESULTS, row(counts), mode: "a")
    puts File.read(RESULTS)
  end

  private

  def measure(name, app)
    server = Bench::CallgrindServer.new(app: app, flags: ["--no-profile"])
    count = server.per_request(@requests)
    FileUtils.cp(server.profile.sub(/\d+\z/, @requests.to_s), File.join(FileUtils.mkdir_p(@keep).first, "#{name}.out")) if @keep
    count
  end

  def row(counts)
    commit = `git -C #{ROOT} rev-parse --short HEAD`.strip
    commit += "+dirty" unless `git -C #{ROOT} status --porcelain -- lib ext`.strip.empty?
    "| #{Time.now.utc.strftime('%Y-%m-%d %H:%M')} | #{commit} | #{counts['hello']} | #{counts['json']} | #{@note} |\n"
  end

  def header
    <<~MARKDOWN
      # Instructions per request

      Written by `bundle exec ruby bench/instructions.rb --requests #{@requests} --note "..."`, one row per
      change to the request path. Server: #{Bench::CallgrindServer.new(app: 'x', flags: ['--no-profile']).describe},
      #{@requests} measured requests minus a run with none; #{RUBY_DESCRIPTION}. Instructions in system calls are not
      counted. The count repeats to within a few instructions for the same build; a row that moves is a change.

      | date (UTC) | commit | hello world | JSON | change |
      |---|---|---:|---:|---|
    MARKDOWN
  end
end

options = { requests: 10_000, note: "", keep: nil }
OptionParser.new do |parser|
  parser.on("--requests N", Integer) { |value| options[:requests] = value }
  parser.on("--note TEXT") { |value| options[:note] = value }
  parser.on("--keep DIR") { |value| options[:keep] = value }
end.parse!
InstructionsBench.new(**options).run
