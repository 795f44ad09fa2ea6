# frozen_string_literal: true

# Instructions per hello-world request over HTTP/1.1 and over h2c (one and ten streams per
# connection), counted by callgrind in one server process (the method of
# bench/results/http2_cost.md's third round): the real server (`exe/heron -e production -q
# --no-metrics`, bench/hello.ru) under `valgrind --tool=callgrind`, warmed with 600 requests of
# each row, then for each row its counters zeroed, `h2load -n N -c 16` run and the counters
# dumped: the server's instructions over its 2xx responses. Not counted: time in the kernel.
# Prints one Markdown row; --root measures another checkout (e.g. a copy of main).
#
#   bundle exec ruby bench/http2_instructions.rb [--requests 3000] [--root DIR] [--keep DIR]
#
# --keep leaves each row's callgrind dump in DIR (for callgrind_annotate). Needs valgrind and
# h2load. About five minutes on a busy 2-core machine.
require "optparse"
require "fileutils"
require "tmpdir"
require "rbconfig"
require_relative "lib/server_process"

# One measurement: the three rows in one server process.
class HTTP2InstructionsBench
  ROWS = { "HTTP/1.1" => ["--h1"], "h2c -m 1" => ["-m", "1"], "h2c -m 10" => ["-m", "10"] }.freeze
  CONNECTIONS = 16
  WARMUP = 600

  # @param requests [Integer] requests per row.
  # @param root [String] the checkout whose server runs.
  # @param keep [String, nil] directory for the dumps.
  def initialize(requests:, root:, keep:)
    @requests = requests
    @root = File.expand_path(root)
    @keep = keep
    @dir = Dir.mktmpdir("heron-h2-callgrind")
  end

  # Measures the rows and prints them.
  # @return [void]
  def run
    server = start
    ROWS.each_value { |flags| h2load(server.port, WARMUP, flags) }
    counts = ROWS.to_h { |name, flags| [name, measure(server, name, flags)] }
    server.stop(grace: 120)
    puts row(counts)
  end

  private

  def start
    port = Bench::ServerProcess.free_port
    argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=#{@dir}/callgrind.out", RbConfig.ruby, "-rbundler/setup",
            "-I", File.join(@root, "lib"), File.join(@root, "exe/heron"), "-e", "production", "-q", "--no-metrics",
            "--control-bind", "tcp://127.0.0.1:0", "-p", port.to_s, "-o", "127.0.0.1", File.join(@root, "bench/hello.ru")]
    Bench::ServerProcess.new(argv, port: port, log: File.join(@dir, "server.log"), chdir: @root,
                                   env: { "BUNDLE_GEMFILE" => File.join(@root, "Gemfile") }).start(timeout: 900)
  end

  # @return [Integer] instructions per 2xx response of the row.
  def measure(server, name, flags)
    control(server, "--zero")
    served = h2load(server.port, @requests, flags)
    before = dumps
    control(server, "--dump")
    dump = (dumps - before).first or raise "no callgrind dump for #{name}"
    FileUtils.cp(dump, File.join(FileUtils.mkdir_p(@keep).first, "#{name.tr(' /', '_')}.out")) if @keep
    File.read(dump)[/^(?:summary|totals): (\d+)/, 1].to_i / served
  end

  def dumps = Dir[File.join(@dir, "callgrind.out*")]

  def control(server, action)
    system("callgrind_control", action, server.pid.to_s, out: File::NULL, err: File::NULL, exception: true)
  end

  # @return [Integer] 2xx responses.
  def h2load(port, requests, flags)
    out = IO.popen(["h2load", "-n", requests.to_s, "-c", CONNECTIONS.to_s, *flags, "http://127.0.0.1:#{port}/"], &:read)
    out[/status codes: (\d+) 2xx/, 1].to_i.nonzero? or raise "h2load served nothing:\n#{out}"
  end

  def row(counts)
    commit = `git -C #{@root} rev-parse --short HEAD`.strip
    h1 = counts.fetch("HTTP/1.1")
    cells = ROWS.keys.drop(1).map { |name| format("%<count>s | %<ratio>.2f×", count: counts[name], ratio: counts[name].fdiv(h1)) }
    "| #{commit} | #{h1} | #{cells.join(' | ')} |"
  end
end

options = { requests: 3000, root: File.expand_path("..", __dir__), keep: nil }
OptionParser.new do |o|
  o.on("--requests N", Integer) { |v| options[:requests] = v }
  o.on("--root DIR") { |v| options[:root] = v }
  o.on("--keep DIR") { |v| options[:keep] = v }
end.parse!
HTTP2InstructionsBench.new(**options).run
