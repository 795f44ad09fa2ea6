# frozen_string_literal: true

# File-serving row (issue 14, point 4): a 200 MB file through Rack::Files, downloaded once and
# then four times at once, from Heron and from Puma. Both servers run for the whole script and
# take turns, round after round, so machine load hits both alike; the table gives medians over
# the rounds (and the quartiles). For each: the server's RSS growth (peak VmRSS sampled every
# 20 ms during the downloads, minus VmRSS just before; the largest over the rounds), its CPU
# seconds (user + system, in ns from /proc/PID/task/*/schedstat: both servers' threads live for
# the whole run) per GB sent, and the clients' (curl writing to /dev/null) CPU seconds per GB.
# On loopback the kernel delivers each packet to curl's socket inside the server's own system
# call and runs part of the sending side's TCP work in whichever process handles the ACKs, so
# the server's figure includes client work. `--netns` runs the clients in a network namespace
# of their own, joined by a veth pair, with each side's packets processed on its own CPU (server
# on CPU 0, curl on CPU 1; bench/lib/netns_link.rb): the split two hosts would see. Needs root.
# There the table adds CPU 0's busy time per GB (bench/lib/cpu_time.rb, with this script moved
# to CPU 1): what the server's host pays, the ACKs' interrupt work included, which a process's
# own CPU time counts only when the interrupt happens to find it running.
#
# `--range` asks for all but the first byte (`Range: bytes=1-`, a 206 from Rack::Files).
#
#   bundle exec ruby bench/file_serving.rb [--rounds N] [--megabytes MB] [--netns] [--range]   # defaults 10, 200
require "optparse"
require "tmpdir"
require "fileutils"
require_relative "lib/servers"
require_relative "lib/netns_link"
require_relative "lib/cpu_time"
require_relative "lib/results_page"

Bench::ResultsPage.capture("file-serving.md") if $PROGRAM_NAME == __FILE__

module Bench
  # Runs the downloads against both servers in turns and measures them.
  class FileServing
    SERVERS = { "heron" => [], "puma" => %w[-t 5:5] }.freeze
    COUNTS = [1, 4].freeze

    def initialize(megabytes:, rounds:, netns: false, range: false)
      @megabytes = megabytes
      @rounds = rounds
      @range = range ? %w[-r 1-] : []
      @link = NetnsLink.new if netns
      @dir = Dir.mktmpdir("heron-bench-files")
      File.open(File.join(@dir, "big.bin"), "wb") { |f| megabytes.times { f.write(Random.bytes(1024 * 1024)) } }
    end

    def run
      @link&.open
      system("taskset", "-p", "-c", @link.client_cpu.to_s, Process.pid.to_s, out: File::NULL, exception: true) if @link
      servers = SERVERS.to_h { |name, extra| [name, start(name, extra)] }
      samples = Hash.new { |hash, key| hash[key] = [] }
      @rounds.times do
        COUNTS.each { |count| servers.each { |name, server| samples[[name, count]] << measure(server, count) } }
      end
      table(samples)
    ensure
      servers&.each_value(&:stop)
      @link&.close
      FileUtils.rm_rf(@dir)
    end

    private

    def table(samples)
      cpu0 = @link ? " CPU #{@link.server_cpu} busy s per GB |" : ""
      puts "| server | downloads | MB each | RSS growth (MB, max) | server CPU s per GB | clients CPU s per GB | server + clients |#{cpu0} wall s |"
      puts "|---|---|---|---|---|---|---|#{'---|' if @link}---|"
      COUNTS.each do |count|
        SERVERS.each_key { |name| puts row(name, count, samples[[name, count]].transpose) }
      end
    end

    def row(name, count, columns)
      rss, server, clients, wall, host = columns
      sums = server.zip(clients).map(&:sum)
      format("| %s | %d | %d | %.1f | %s | %s | %s |%s %.2f |", name, count, @megabytes, rss.max, quartiles(server),
             quartiles(clients), quartiles(sums), (" #{quartiles(host)} |" if @link), median(wall))
    end

    def quartiles(values)
      sorted = values.sort
      format("%.3f (%.3f–%.3f)", median(sorted), sorted[sorted.size / 4], sorted[sorted.size * 3 / 4])
    end

    def median(values) = values.sort[values.size / 2]

    def host = @link ? @link.server_host : "127.0.0.1"

    # @param side [Symbol] :server or :client.
    # @return [Array<String>] what runs a command on that side (nothing over loopback).
    def prefix(side) = @link ? @link.public_send(:"#{side}_prefix") : []

    def start(name, extra)
      port = ServerProcess.free_port
      argv = prefix(:server) + Servers.argv(name, port, "bench/files.ru", extra, host: host)
      server = ServerProcess.new(argv, port: port, log: File.join(@dir, "#{name}.log"), host: host,
                                       chdir: File.expand_path("..", __dir__), env: { "BENCH_FILES_DIR" => @dir })
      server.start
      download(server, 1) # warm-up: code paths loaded, buffers allocated once
      server
    end

    # @return [Array(Float, Float, Float, Float, Float)] RSS growth MB; server and clients CPU s
    #   per GB; wall s; CPU 0's busy s per GB.
    def measure(server, count)
      rss_before = server.rss_kb
      cpu_before = server.on_cpu_seconds
      clients_before = ChildCpu.seconds
      host_before = host_busy
      peak, wall = PeakRss.during(server.method(:rss_kb)) { download(server, count) }
      gigabytes = count * @megabytes / 1024.0
      [(peak - rss_before) / 1024.0, (server.on_cpu_seconds - cpu_before) / gigabytes,
       (ChildCpu.seconds - clients_before) / gigabytes, wall, (host_busy - host_before) / gigabytes]
    end

    # @return [Float] busy seconds of the server's CPU (with --netns; over loopback both sides share
    #   the CPUs, and the column is not shown).
    def host_busy = @link ? CpuTime.busy_seconds(@link.server_cpu) : 0.0

    def download(server, count)
      pids = count.times.map do
        Process.spawn(*prefix(:client), "curl", "-sSf", *@range, "-o", File::NULL, server.url("/big.bin"))
      end
      statuses = pids.map { |pid| Process.wait2(pid).last }
      raise "a download failed" unless statuses.all?(&:success?)
    end
  end
end

if $PROGRAM_NAME == __FILE__
  options = { megabytes: 200, rounds: 10 }
  OptionParser.new do |o|
    o.on("--rounds N", Integer) { |n| options[:rounds] = n }
    o.on("--megabytes MB", Integer) { |n| options[:megabytes] = n }
    o.on("--range", "206 responses: every byte but the first") { options[:range] = true }
    o.on("--netns", "clients in a network namespace of their own, each side on its own CPU") { options[:netns] = true }
  end.parse!
  Bench::FileServing.new(**options).run
end
