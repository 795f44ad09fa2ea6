# frozen_string_literal: true

# TLS hello world: Heron, Puma and Falcon over HTTP/1.1 and HTTP/2 (where they speak it), one run,
# with h2load (Debian's nghttp2-client): req/s and server CPU per request.
#
#   bundle exec ruby bench/tls.rb                 # 3 rounds of 10 s per row, about 4 minutes
#   bundle exec ruby bench/tls.rb --rounds 1 --seconds 3
#
# Rows (bench/hello.ru, 16 connections; h2load -t 1):
#   HTTP/2    h2load -c 16 -m 10: 10 concurrent streams per connection (160 in flight)
#   HTTP/1.1  h2load --h1 -c 16 -m 1: one request at a time per connection, no pipelining
# Servers: Heron (ssl:// bind, one process), Puma (ssl:// bind, single mode, HTTP/1.1 only) and
# Falcon (https bind, --threaded --count 1, its own `localhost` gem certificate). Each server is
# started fresh per round and row, warmed up for 2 s, then measured. Server CPU is user + system
# time of every process in the server's process group, from /proc/PID/stat, over the measured
# window, divided by the requests h2load completed in it. The medians over the rounds are printed
# as a Markdown table and written to bench/results/tls.md.

require "openssl"
require "optparse"
require "open3"
require "tmpdir"
require "fileutils"
require "etc"
require_relative "lib/server_process"
require_relative "lib/clock"
require_relative "lib/proc_fs"
require_relative "lib/self_signed"

module Bench
  # Runs the TLS rows and prints the table.
  class TLS
    ROOT = File.expand_path("..", __dir__)
    RESULTS = File.join(ROOT, "bench/results")
    ENV_VARS = { "RACK_ENV" => "production", "APP_ENV" => "production" }.freeze
    ROWS = [%w[heron h2], %w[heron h1], %w[puma h1], %w[falcon h2], %w[falcon h1]].freeze

    def initialize(argv)
      @rounds = 3
      @seconds = 10
      @warmup = 2
      OptionParser.new do |o|
        o.banner = "Usage: bundle exec ruby bench/tls.rb [--rounds N] [--seconds S]"
        o.on("--rounds N", Integer, "rounds per row (default 3)") { |n| @rounds = n.clamp(1, 10) }
        o.on("--seconds S", Integer, "measured seconds per round (default 10)") { |s| @seconds = s.clamp(1, 60) }
      end.parse!(argv)
    end

    def run
      abort "h2load not found: apt-get install nghttp2-client" unless system("command -v h2load >/dev/null")
      FileUtils.mkdir_p(RESULTS)
      samples = Hash.new { |h, k| h[k] = [] }
      Dir.mktmpdir("heron-tls-bench") do |dir|
        cert, key = certificate(dir)
        @rounds.times do |round|
          ROWS.each do |server, protocol|
            samples[[server, protocol]] << measure(server, protocol, cert, key, round + 1)
          end
        end
      end
      table = markdown(samples)
      File.write(File.join(RESULTS, "tls.md"), table)
      puts "", table
    end

    private

    # A self-signed certificate for 127.0.0.1 and localhost (h2load does not verify).
    def certificate(dir)
      SelfSigned.write(dir)
    end

    def server_argv(name, port, cert, key)
      case name
      when "heron" then %W[bundle exec exe/heron -b ssl://127.0.0.1:#{port}?cert=#{cert}&key=#{key} -e production -q bench/hello.ru]
      when "puma" then %W[bundle exec puma --no-config -b ssl://127.0.0.1:#{port}?cert=#{cert}&key=#{key}&verify_mode=none -e production bench/hello.ru]
      when "falcon" then %W[bundle exec falcon serve --threaded --count 1 -b https://127.0.0.1:#{port} -c bench/hello.ru]
      end
    end

    def h2load_argv(protocol, port, seconds)
      streams = protocol == "h2" ? %w[-m 10] : %w[--h1 -m 1]
      %W[h2load -t 1 -c 16 -D #{seconds} #{streams.join(' ')} https://127.0.0.1:#{port}/].flat_map(&:split)
    end

    # One fresh server: warm-up, then one measured h2load run.
    # @return [Hash] rps, cpu_us (server CPU microseconds per request), errors.
    def measure(name, protocol, cert, key, round)
      port = ServerProcess.free_port
      argv = server_argv(name, port, cert, key)
      log = File.join(RESULTS, "tls-#{name}-#{protocol}.server.raw")
      server = ServerProcess.new(argv, port: port, log: log, chdir: ROOT, env: ENV_VARS).start
      @commands ||= {}
      @commands[name] = argv.join(" ").gsub(/:#{port}\b/, ":PORT").gsub(%r{/tmp/\S*?/(cert|key)\.pem}, '\1.pem')
      h2load(protocol, port, @warmup)
      cpu_before = ProcFS.group_cpu_seconds(server.pid)
      out = h2load(protocol, port, @seconds)
      cpu = ProcFS.group_cpu_seconds(server.pid) - cpu_before
      result = parse(out, cpu)
      File.write(File.join(RESULTS, "tls-#{name}-#{protocol}-r#{round}.raw"), out)
      puts format("round %d %-6s %-2s %9.0f req/s  %6.1f us CPU/request  errors %d", round, name, protocol,
                  result[:rps], result[:cpu_us], result[:errors])
      result
    ensure
      server&.stop
    end

    def h2load(protocol, port, seconds)
      out, status = Open3.capture2e(*h2load_argv(protocol, port, seconds))
      raise "h2load failed:\n#{out}" unless status.success?
      out
    end

    def parse(out, cpu)
      done = out[/requests: \d+ total, \d+ started, (\d+) done/, 1].to_i
      failed = out.scan(/(\d+) (?:failed|errored|timeout)\b/).flatten.sum(&:to_i)
      non_2xx = out.scan(/(\d+) [345]xx\b/).flatten.sum(&:to_i)
      rps = out[/finished in [\d.]+\w*, ([\d.]+) req\/s/, 1].to_f
      { rps: rps, cpu_us: done.positive? ? cpu * 1e6 / done : Float::NAN, errors: failed + non_2xx }
    end

    def markdown(samples)
      rows = samples.map do |(name, protocol), list|
        rps = median(list.map { |r| r[:rps] })
        cpu = median(list.map { |r| r[:cpu_us] })
        errors = list.sum { |r| r[:errors] }
        label = protocol == "h2" ? "HTTP/2 (16 × 10 streams)" : "HTTP/1.1 (16 connections)"
        format("| %s | %s | %.0f | %.0f | %d |", name.capitalize, label, rps, cpu, errors)
      end
      <<~MD
        TLS hello world, #{Time.now.utc.strftime('%Y-%m-%d')}: medians of #{@rounds} rounds of #{@seconds} s (after #{@warmup} s of warm-up), #{Etc.nprocessors} CPUs shared with other work, ruby #{RUBY_VERSION}.
        Command: `bundle exec ruby bench/tls.rb --rounds #{@rounds} --seconds #{@seconds}`

        | server | protocol | req/s | server CPU µs/request | failed or non-2xx (all rounds) |
        |---|---|---:|---:|---:|
        #{rows.join("\n")}

        Servers: #{@commands.map { |_name, command| "`#{command}`" }.join(', ')}
      MD
    end

    def median(values)
      sorted = values.sort
      sorted[sorted.size / 2]
    end
  end
end

Bench::TLS.new(ARGV).run if $PROGRAM_NAME == __FILE__
