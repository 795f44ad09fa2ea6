# frozen_string_literal: true

# Upload memory under concurrency (issue 28, point 5): N concurrent 100 MiB uploads (N = 1, 4,
# 16) to an app that reads rack.input in 16 KiB pieces into one buffer (bench/uploads.ru /buffer)
# and to one that reads it whole with read() (/read), Heron (default settings, so
# body_memory_limit 256 MiB; and with `--body-memory-limit unlimited`, which reads whole bodies
# into memory as they arrive, as before) vs Puma (its defaults: bodies over 112 KiB spooled to a
# Tempfile before the app runs, 5 threads). Each case runs on a freshly started server, after a
# 1 MiB warm-up upload. Reported: the server's peak RSS growth (whole process tree, sampled every
# 20 ms, minus RSS after the warm-up), the peak RSS itself, and MB/s (bytes uploaded / wall
# seconds, all N curl processes together).
#
#   bundle exec ruby bench/upload_memory.rb [--concurrency 1,4,16] [--only heron,heron-unlimited,puma] [--out FILE]
require "optparse"
require "tmpdir"
require "fileutils"
require_relative "lib/servers"
require_relative "lib/proc_fs"

module Bench
  # Runs the cases and writes bench/results/upload_memory.md.
  class UploadMemory
    ROOT = File.expand_path("..", __dir__)
    MIB = 1024 * 1024
    UPLOAD_MIB = 100
    APPS = { "/buffer" => "read(16384, buf)", "/read" => "read()" }.freeze
    VARIANTS = { "heron" => ["heron", []], "heron-unlimited" => ["heron", %w[--body-memory-limit unlimited]],
                 "puma" => ["puma", []] }.freeze

    def initialize(concurrency:, servers:, out:)
      @concurrency = concurrency
      @servers = servers
      @out = out
      @dir = Dir.mktmpdir("heron-bench-upload-memory")
      @rows = []
    end

    def run
      file = body_file(UPLOAD_MIB)
      APPS.each_key do |path|
        @concurrency.each do |count|
          @servers.each { |variant| @rows << [path, count, variant, *measure(variant, path, count, file)].tap { |row| warn row.inspect } }
        end
      end
      File.write(@out, report)
      puts report
    ensure
      FileUtils.rm_rf(@dir)
    end

    private

    # @return [Array(Float, Float, Float)] peak RSS growth and peak RSS in MiB, MB/s.
    def measure(variant, path, count, file)
      server = start(variant)
      upload(server, path, body_file(1), 1)
      before = server.tree_rss_kb
      peak, wall = PeakRss.during(server.method(:tree_rss_kb)) { upload(server, path, file, count) }
      [(peak - before) / 1024.0, peak / 1024.0, UPLOAD_MIB * MIB * count / 1e6 / wall]
    ensure
      server&.stop
    end

    def start(variant)
      name, extra = VARIANTS.fetch(variant)
      port = ServerProcess.free_port
      ServerProcess.new(Servers.argv(name, port, "bench/uploads.ru", extra), port: port,
                        log: File.join(@dir, "#{variant}.log"), chdir: ROOT).start
    end

    # A sparse file of zeros of the given size.
    def body_file(mebibytes)
      path = File.join(@dir, "#{mebibytes}mib.bin")
      File.open(path, "wb") { |f| f.truncate(mebibytes * MIB) } unless File.exist?(path)
      path
    end

    # Sends `count` uploads at once, each from its own curl, and checks each answer is the size.
    def upload(server, path, file, count)
      Array.new(count) do
        Thread.new do
          out = IO.popen(["curl", "-sSf", "-H", "Expect:", "-X", "POST", "-T", file, server.url(path)], &:read)
          raise "upload answered #{out.inspect}" unless out == File.size(file).to_s
        end
      end.each(&:join)
    end

    def report
      <<~MD
        # Upload memory under concurrency: Heron vs Puma (issue 28, point 5)

        #{Time.now.utc.strftime('%Y-%m-%d %H:%M')} UTC, `bundle exec ruby bench/upload_memory.rb #{ARGV_TEXT}`,
        Heron at #{`git -C #{ROOT} rev-parse --short HEAD`.strip}, Ruby #{RUBY_VERSION}, #{Etc.nprocessors} cores
        (load average #{Bench::ProcFS.load_averages.join(' ')} at the end). Each row: a fresh
        server, a 1 MiB warm-up upload, then N concurrent uploads of #{UPLOAD_MIB} MiB (Content-Length,
        curl `-T`, no `Expect`). `heron` has the defaults (`body_memory_limit` 256 MiB per reactor
        thread, `body_spool_threshold` 128 KiB); `heron-unlimited` is `--body-memory-limit unlimited`
        (whole bodies read into memory as they arrive: Heron before this change); Puma spools every
        body over 112 KiB to a Tempfile before the app runs and runs 5 threads.

        | app reads | uploads at once | server | RSS growth (MiB) | peak RSS (MiB) | MB/s |
        |---|---|---|---|---|---|
        #{@rows.map { |path, count, variant, growth, peak, rate| format('| %s | %d | %s | %.0f | %.0f | %.0f |', APPS.fetch(path), count, variant, growth, peak, rate) }.join("\n")}
      MD
    end
  end
end

if $PROGRAM_NAME == __FILE__
  require "etc"
  ARGV_TEXT = ARGV.join(" ")
  options = { concurrency: [1, 4, 16], servers: Bench::UploadMemory::VARIANTS.keys, out: File.join(Bench::UploadMemory::ROOT, "bench/results/upload_memory.md") }
  OptionParser.new do |o|
    o.on("--concurrency LIST", Array) { |list| options[:concurrency] = list.map(&:to_i) }
    o.on("--only LIST", Array) { |list| options[:servers] = list }
    o.on("--out FILE") { |file| options[:out] = file }
  end.parse!
  Bench::UploadMemory.new(**options).run
end
