# frozen_string_literal: true

# Upload rows (issue 20, point 1): request bodies read fully by the app (bench/uploads.ru), Heron
# vs Puma vs Falcon, each server started fresh for each case. A case is N uploads of S MB, C at a
# time, sent by curl processes (`-T FILE`, no `Expect: 100-continue`, Content-Length or chunked):
#
# - buffer: the app reads rack.input with read(16384, buffer), as a streaming app does;
# - pieces: the app reads read(16384), a new String each time (what `each` does too);
# - read:   the app calls read() with no argument, which holds the whole body by necessity.
#
# For each: MB/s (bytes uploaded / wall seconds), the server's CPU seconds (user + system, the
# server's whole process tree, /proc/PID/stat) per GB uploaded, and its RSS growth (peak VmRSS of
# the tree sampled every 20 ms during the uploads, minus VmRSS after a warm-up upload), also per
# concurrent upload; and the clients' (curl's) CPU seconds per GB, since on loopback the kernel
# runs part of one side's TCP work in the other's process. With --rounds N each case runs N times; the table shows medians and ranges.
#
#   bundle exec ruby bench/uploads.rb [--rounds N] [--only heron,puma]
require "optparse"
require "tmpdir"
require "fileutils"
require_relative "lib/options"
require_relative "lib/servers"
require_relative "lib/body_file"
require_relative "lib/results_page"

Bench::ResultsPage.capture("uploads.md") if $PROGRAM_NAME == __FILE__

module Bench
  # Runs the upload cases against each server and prints a Markdown table.
  class Uploads
    Case = Struct.new(:megabytes, :count, :concurrency, :path, :chunked, keyword_init: true) do
      READS = { "/read" => "read()", "/pieces" => "read(16384)", "/buffer" => "read(16384, buf)" }.freeze

      def label = "#{megabytes} MB x #{count}, #{concurrency} at a time, #{READS.fetch(path)}#{chunked ? ', chunked' : ''}"
      def gigabytes = megabytes * count / 1024.0
    end

    CASES = [
      Case.new(megabytes: 10, count: 50, concurrency: 10, path: "/buffer", chunked: false),
      Case.new(megabytes: 10, count: 50, concurrency: 10, path: "/buffer", chunked: true),
      Case.new(megabytes: 10, count: 50, concurrency: 10, path: "/pieces", chunked: false),
      Case.new(megabytes: 10, count: 50, concurrency: 10, path: "/read", chunked: false),
      Case.new(megabytes: 1024, count: 1, concurrency: 1, path: "/buffer", chunked: false),
    ].freeze
    # Heron refuses bodies over max_body_size (100 MiB by default); Puma and Falcon have no limit.
    EXTRA = { "heron" => %w[--max-body-size 2147483648], "puma" => [], "falcon" => [] }.freeze

    def initialize(servers:, rounds:)
      @servers = servers
      @rounds = rounds
      @dir = Dir.mktmpdir("heron-bench-uploads")
    end

    def run
      puts "| case | server | MB/s | server CPU s per GB | clients CPU s per GB | RSS growth (MB) | RSS per concurrent upload (MB) |"
      puts "|---|---|---|---|---|---|---|"
      CASES.each do |kase|
        @servers.each { |name| puts row(kase, name, Array.new(@rounds) { measure(kase, name) }) }
      end
    ensure
      FileUtils.rm_rf(@dir)
    end

    private

    def row(kase, name, samples)
      mbs, cpu, clients, rss = samples.transpose
      format("| %s | %s | %s | %s | %s | %s | %s |", kase.label, name, spread(mbs, 0), spread(cpu, 2), spread(clients, 2), spread(rss, 1),
             spread(rss.map { |mb| mb / kase.concurrency }, 2))
    end

    def spread(values, digits)
      sorted = values.sort
      median = format("%.#{digits}f", sorted[sorted.size / 2])
      sorted.size == 1 ? median : "#{median} (#{format("%.#{digits}f", sorted.first)}–#{format("%.#{digits}f", sorted.last)})"
    end

    # @return [Array(Float, Float, Float, Float)] MB/s, server and clients CPU seconds per GB, RSS
    #   growth in MB.
    def measure(kase, name)
      server = start(name)
      file = body_file(kase.megabytes)
      upload(server, kase, file, 1, 1) # warm-up: code loaded, buffers allocated once
      rss_before = server.tree_rss_kb
      cpu_before = server.tree_cpu_seconds
      clients_before = ChildCpu.seconds
      peak, wall = PeakRss.during(server.method(:tree_rss_kb)) { upload(server, kase, file, kase.count, kase.concurrency) }
      cpu = server.tree_cpu_seconds - cpu_before
      clients = ChildCpu.seconds - clients_before
      [kase.megabytes * kase.count / wall, cpu / kase.gigabytes, clients / kase.gigabytes, (peak - rss_before) / 1024.0]
    ensure
      server&.stop
    end

    def start(name) = Servers.start(name, "bench/uploads.ru", EXTRA.fetch(name), dir: @dir)

    def body_file(megabytes) = BodyFile.zeros(@dir, megabytes * 1024 * 1024)

    # Sends `count` uploads, `concurrency` at a time, and checks each answer is the byte count.
    def upload(server, kase, file, count, concurrency)
      queue = Queue.new
      count.times { queue << file }
      queue.close
      Array.new(concurrency) { Thread.new { while (path = queue.pop) do curl(server, kase, path) end } }.each(&:join)
    end

    def curl(server, kase, path)
      framing = kase.chunked ? ["-H", "Transfer-Encoding: chunked"] : []
      out = IO.popen(["curl", "-sSf", "-H", "Expect:", *framing, "-X", "POST", "-T", path, server.url(kase.path)], &:read)
      raise "upload to #{server.argv.join(' ')} answered #{out.inspect}" unless out == File.size(path).to_s
    end
  end
end

if $PROGRAM_NAME == __FILE__
  options = { servers: %w[heron puma falcon], rounds: 1 }
  OptionParser.new do |o|
    o.on("--rounds N", Integer) { |n| options[:rounds] = n }
    Bench::Options.only(o, Bench::Uploads::EXTRA.keys) { |list| options[:servers] = list }
  end.parse!
  Bench::Uploads.new(**options).run
end
