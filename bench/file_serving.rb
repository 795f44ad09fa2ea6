# frozen_string_literal: true

# File-serving row (issue 14, point 4): a 200 MB file through Rack::Files, downloaded once and
# then four times at once, from Heron and from Puma, one server at a time. For each: the server's
# RSS growth (peak VmRSS sampled every 20 ms during the downloads, minus VmRSS after a warm-up
# request) and its CPU seconds (user + system) per GB sent. The clients are curl processes
# writing to /dev/null, so their CPU is not the server's.
#
#   bundle exec ruby bench/file_serving.rb [MB]     # default 200
require "tmpdir"
require_relative "lib/server_process"
require_relative "lib/clock"

module Bench
  # Runs the downloads against one server and measures it.
  class FileServing
    SERVERS = {
      "heron" => ->(port) { %W[bundle exec exe/heron -b tcp://127.0.0.1:#{port} -e production -q bench/files.ru] },
      "puma" => ->(port) { %W[bundle exec puma --no-config -b tcp://127.0.0.1:#{port} -e production -t 5:5 bench/files.ru] },
    }.freeze

    def initialize(megabytes)
      @megabytes = megabytes
      @dir = Dir.mktmpdir("heron-bench-files")
      File.open(File.join(@dir, "big.bin"), "wb") { |f| megabytes.times { f.write(Random.bytes(1024 * 1024)) } }
    end

    def run
      puts "| server | downloads | MB each | RSS growth (MB) | CPU s per GB | wall s |"
      puts "|---|---|---|---|---|---|"
      SERVERS.each do |name, argv|
        [1, 4].each { |count| puts row(name, argv, count) }
      end
    ensure
      FileUtils.rm_rf(@dir)
    end

    private

    def row(name, argv, count)
      port = ServerProcess.free_port
      server = ServerProcess.new(argv.call(port), port: port, log: File.join(@dir, "#{name}.log"),
                                                  chdir: File.expand_path("..", __dir__), env: { "BENCH_FILES_DIR" => @dir })
      server.start
      download(server, 1) # warm-up: code paths loaded, buffers allocated once
      rss_before = server.rss_kb
      cpu_before = server.cpu_seconds
      peak, wall = sample_peak(server) { download(server, count) }
      cpu = server.cpu_seconds - cpu_before
      gigabytes = count * @megabytes / 1024.0
      format("| %s | %d | %d | %.1f | %.2f | %.2f |", name, count, @megabytes, (peak - rss_before) / 1024.0, cpu / gigabytes, wall)
    ensure
      server&.stop
    end

    def download(server, count)
      pids = count.times.map do
        Process.spawn("curl", "-sSf", "-o", File::NULL, server.url("/big.bin"))
      end
      pids.each { |pid| Process.wait(pid) }
      raise "a download failed" unless $?.success?
    end

    def sample_peak(server)
      peak = server.rss_kb
      done = false
      sampler = Thread.new { (peak = [peak, server.rss_kb].max; sleep 0.02) until done }
      started = Clock.now
      yield
      wall = Clock.now - started
      done = true
      sampler.join
      [peak, wall]
    end
  end
end

Bench::FileServing.new(Integer(ARGV.fetch(0, "200"))).run if $PROGRAM_NAME == __FILE__
