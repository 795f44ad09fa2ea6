# frozen_string_literal: true

# Upload memory under concurrency (issue 28, point 5): N concurrent 100 MiB uploads (N = 1, 4,
# 16) to an app that reads rack.input in 16 KiB pieces into one buffer (bench/uploads.ru /buffer)
# and to one that reads it whole with read() (/read), Heron (default settings, so
# body_memory_limit 256 MiB; and with `--body-memory-limit unlimited`, which reads whole bodies
# into memory as they arrive, as before) vs Puma (its defaults: bodies over 112 KiB spooled to a
# Tempfile before the app runs, 5 threads). Each case runs on a freshly started server, after a
# 1 MiB warm-up upload. Reported: the server's peak RSS growth (whole process tree, sampled every
# 20 ms, minus RSS after the warm-up), the peak RSS itself, and MB/s (bytes uploaded / wall
# seconds, all N curl processes together). The `-h2c` variants upload over cleartext HTTP/2
# (curl --http2-prior-knowledge, a connection each); `heron-h2c-unlimited` is how Heron read
# HTTP/2 bodies before they counted against body_memory_limit.
#
#   bundle exec ruby bench/upload_memory.rb [--concurrency 1,4,16] [--only heron,heron-unlimited,puma,heron-h2c,heron-h2c-unlimited]
#     [--apps /buffer,/read] [--out FILE]
require "optparse"
require "tmpdir"
require_relative "lib/options"
require_relative "lib/report_file"
require_relative "lib/servers"
require_relative "lib/body_file"
require_relative "lib/machine"

module Bench
  # Runs the cases and writes bench/results/upload_memory.md.
  class UploadMemory
    ROOT = File.expand_path("..", __dir__)
    MIB = 1024 * 1024
    UPLOAD_MIB = 100
    APPS = { "/buffer" => "read(16384, buf)", "/read" => "read()" }.freeze
    H2C = %w[--http2-prior-knowledge].freeze
    # variant => [server, its options, curl's options]
    VARIANTS = { "heron" => ["heron", [], []], "heron-unlimited" => ["heron", %w[--body-memory-limit unlimited], []],
                 "puma" => ["puma", [], []], "heron-h2c" => ["heron", [], H2C],
                 "heron-h2c-unlimited" => ["heron", %w[--body-memory-limit unlimited], H2C] }.freeze
    DEFAULT_VARIANTS = %w[heron heron-unlimited puma].freeze

    def initialize(concurrency:, servers:, out:, apps: APPS.keys)
      @apps = apps
      @concurrency = concurrency
      @servers = servers
      @out = out
      @rows = []
    end

    def run
      Dir.mktmpdir("heron-bench-upload-memory") do |dir|
        @dir = dir
        file = body_file(UPLOAD_MIB)
        @apps.product(@concurrency, @servers).each do |path, count, variant|
          @rows << [path, count, variant, *measure(variant, path, count, file)].tap { |row| warn row.inspect }
        end
      end
      Bench::ReportFile.publish(@out, report)
    end

    private

    # @return [Array(Float, Float, Float)] peak RSS growth and peak RSS in MiB, MB/s.
    def measure(variant, path, count, file)
      server = start(variant)
      curl = VARIANTS.fetch(variant).last
      upload(server, path, body_file(1), 1, curl)
      before = server.tree_rss_kb
      peak, wall = PeakRss.during(server.method(:tree_rss_kb)) { upload(server, path, file, count, curl) }
      [(peak - before) / 1024.0, peak / 1024.0, UPLOAD_MIB * MIB * count / 1e6 / wall]
    ensure
      server&.stop
    end

    def start(variant)
      name, extra, = VARIANTS.fetch(variant)
      Servers.start(name, "bench/uploads.ru", extra, dir: @dir, label: variant)
    end

    def body_file(mebibytes) = BodyFile.zeros(@dir, mebibytes * MIB)

    # Sends `count` uploads at once, each from its own curl, and checks each answer is the size.
    def upload(server, path, file, count, curl = [])
      Array.new(count) do
        Thread.new do
          out = IO.popen(["curl", "-sSf", *curl, "-H", "Expect:", "-X", "POST", "-T", file, server.url(path)], &:read)
          raise "upload answered #{out.inspect}" unless out == File.size(file).to_s
        end
      end.each(&:join)
    end

    def report
      <<~MD
        # Upload memory under concurrency: Heron vs Puma (issue 28, point 5)

        #{Time.now.utc.strftime('%Y-%m-%d %H:%M')} UTC, `bundle exec ruby bench/upload_memory.rb #{ARGV_TEXT}`,
        Heron at #{`git -C #{ROOT} rev-parse --short HEAD`.strip}, Ruby #{RUBY_VERSION}, #{Etc.nprocessors} cores
        (load average #{Machine.load} at the end). Each row: a fresh
        server, a 1 MiB warm-up upload, then N concurrent uploads of #{UPLOAD_MIB} MiB (Content-Length,
        curl `-T`, no `Expect`). `heron` has the defaults (`body_memory_limit` 256 MiB per reactor
        thread, `body_spool_threshold` 128 KiB); `heron-unlimited` is `--body-memory-limit unlimited`
        (whole bodies read into memory as they arrive: Heron before this change); Puma spools every
        body over 112 KiB to a Tempfile before the app runs and runs 5 threads. The `-h2c` rows
        upload over cleartext HTTP/2 (curl `--http2-prior-knowledge`, a connection each).

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
  options = { concurrency: [1, 4, 16], servers: Bench::UploadMemory::DEFAULT_VARIANTS, out: File.join(Bench::UploadMemory::ROOT, "bench/results/upload_memory.md") }
  OptionParser.new do |o|
    o.on("--concurrency LIST", Array) { |list| options[:concurrency] = list.map(&:to_i) }
    Bench::Options.only(o, Bench::UploadMemory::VARIANTS.keys) { |list| options[:servers] = list }
    o.on("--apps LIST", Array) { |list| options[:apps] = list }
    Bench::Options.out(o) { |path| options[:out] = path }
  end.parse!
  Bench::UploadMemory.new(**options).run
end
