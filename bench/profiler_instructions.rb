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
require "socket"
require "tmpdir"
require "rbconfig"
require_relative "lib/server_process"
require_relative "lib/profiler_variants"

# One measurement session.
class ProfilerInstructionsBench
  ROOT = File.expand_path("..", __dir__)
  RESULTS = File.join(ROOT, "bench/results/profiler_instructions.md")
  REQUEST = "GET / HTTP/1.1\r\nHost: bench\r\n\r\n"
  CONNECTIONS = 4
  VARIANTS = Bench::ProfilerVariants::FLAGS

  # @param requests [Integer] requests per measured run.
  def initialize(requests)
    @requests = requests
    @dir = Dir.mktmpdir("heron-instructions")
  end

  # Measures every variant and writes the report.
  # @return [void]
  def run
    counts = VARIANTS.to_h { |name, flags| [name, (instructions(flags, @requests) - instructions(flags, 0)) / @requests] }
    File.write(RESULTS, report(counts))
    puts File.read(RESULTS)
  end

  private

  # @return [Integer] instructions the server process ran, start-up and 200 warm-up requests
  #   included, plus `count` requests.
  def instructions(flags, count)
    log = File.join(@dir, "callgrind.log")
    argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=#{File.join(@dir, 'callgrind.out')}",
            RbConfig.ruby, "-rbundler/setup", "-I", File.join(ROOT, "lib"), File.join(ROOT, "exe/heron"),
            "-e", "production", "-q", "--no-metrics", *flags]
    port = Bench::ServerProcess.free_port
    server = Bench::ServerProcess.new([*argv, "-p", port.to_s, "-o", "127.0.0.1", Bench::ProfilerVariants::HELLO],
                                      port: port, log: log, chdir: ROOT).start(timeout: 120)
    drive(port, 200)
    drive(port, count)
    server.stop(grace: 120)
    File.read(log)[/refs:\s+([\d,]+)/, 1].delete(",").to_i
  end

  def drive(port, count)
    Array.new(CONNECTIONS) { Thread.new { keep_alive(port, count / CONNECTIONS) } }.each(&:join)
  end

  def keep_alive(port, count)
    socket = TCPSocket.new("127.0.0.1", port)
    count.times do
      socket.write(REQUEST)
      read_response(socket)
    end
  ensure
    socket&.close
  end

  def read_response(socket)
    buffer = +""
    buffer << socket.readpartial(65_536) until (head = buffer.index("\r\n\r\n"))
    length = buffer[/content-length: (\d+)/i, 1].to_i
    buffer << socket.readpartial(65_536) while buffer.bytesize < head + 4 + length
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
