# frozen_string_literal: true

require "open3"
require_relative "cpu_stat"
require_relative "proc_fs"

module Bench
  # Runs wrk (closed loop, 2 threads) and reads req/s, p99 and errors from its text output.
  # `requests` and `rps` count only 2xx and 3xx responses (wrk's "Non-2xx or 3xx responses" taken
  # off): a server that sheds load with 503s must not look cheaper per request than it is;
  # `non2xx` keeps that count, and `errors` adds the socket errors to it.
  module Wrk
    # `gc`: the server's GCStat::Delta over the run, when it was measured (Heron in bench/run.rb).
    Result = Struct.new(:rps, :p99_ms, :p50_ms, :requests, :non2xx, :errors, :load_before, :steal, :server_cpu_s, :server_wait_s, :gc,
                        keyword_init: true)
    UNITS = { "us" => 0.001, "ms" => 1.0, "s" => 1000.0, "m" => 60_000.0 }.freeze

    module_function

    def version
      out, = Open3.capture2e("wrk", "-v")
      out[/wrk \S+/] || "wrk"
    end

    # `cpu`, when given, pins wrk to that CPU list with taskset; `timeout` (seconds) replaces
    # wrk's 2 s limit for a response.
    def command(url, connections:, seconds:, threads: 2, latency: false, cpu: nil, timeout: nil)
      argv = cpu ? ["taskset", "-c", cpu.to_s] : []
      argv += ["wrk", "-t#{threads}", "-c#{connections}", "-d#{seconds}s"]
      argv << "--timeout" << "#{timeout}s" if timeout
      argv << "--latency" if latency
      argv << url
    end

    # `server`, when given, is asked for its CPU seconds before and after the run.
    def run(url, raw: nil, server: nil, **options)
      load_before = ProcFS.load_averages.first
      cpu_before = server&.cpu_seconds
      wait_before = server&.run_queue_seconds
      (out, status), steal = CpuStat.measure { Open3.capture2e(*command(url, **options)) }
      cpu_used = server && server.cpu_seconds - cpu_before
      waited = server && server.run_queue_seconds - wait_before
      File.write(raw, out) if raw
      raise "wrk failed (exit #{status.exitstatus}):\n#{out}" unless status.success?

      parse(out).tap do |r|
        r.load_before = load_before
        r.steal = steal
        r.server_cpu_s = cpu_used
        r.server_wait_s = waited
      end
    end

    def parse(text)
      socket_errors = text[/Socket errors: (.*)$/, 1].to_s.scan(/\d+/).sum(&:to_i)
      non2xx = text[/Non-2xx or 3xx responses: (\d+)/, 1].to_i
      all = text[/(\d+) requests in/, 1].to_i
      rps = text[/Requests\/sec:\s+([\d.]+)/, 1].to_f
      Result.new(
        rps: all.positive? ? rps * (all - non2xx) / all : 0.0,
        p99_ms: duration_ms(text[/^\s+99%\s+(\S+)/, 1]),
        p50_ms: duration_ms(text[/^\s+50%\s+(\S+)/, 1]),
        requests: all - non2xx, non2xx: non2xx,
        errors: socket_errors + non2xx
      )
    end

    def duration_ms(value)
      return nil unless value

      number, unit = value.match(/\A([\d.]+)([a-z]+)\z/).captures
      number.to_f * UNITS.fetch(unit)
    end
  end
end
