# frozen_string_literal: true

require "etc"
require_relative "../cluster/memory"

module Heron
  class Metrics
    # This process's resource use, under the names every Prometheus client library exports
    # (`process_cpu_seconds_total`, `process_resident_memory_bytes`, ...): CPU seconds from
    # the process CPU clock, the file descriptor limit from getrlimit, and, where /proc exists
    # (Linux), resident memory, open descriptors and the start time. A value that cannot be
    # read is left out rather than guessed.
    module ProcessStats
      PROC = "/proc/self"

      module_function

      # @return [Hash{String => Numeric}] "cpu_seconds", "max_fds", and when readable
      #   "resident_memory_bytes", "open_fds", "start_time_seconds".
      def read
        stats = { "cpu_seconds" => Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID),
                  "max_fds" => Process.getrlimit(:NOFILE).first }
        { "resident_memory_bytes" => resident_bytes, "open_fds" => open_fds,
          "start_time_seconds" => start_time }.each { |key, value| stats[key] = value if value }
        stats
      end

      # @return [Integer, nil] resident set size in bytes (the reading the cluster's memory
      #   limit uses, so the metric and the limit agree).
      def resident_bytes = Cluster::Memory.rss(Process.pid)

      # @return [Integer, nil] open file descriptors, not counting the one listing them.
      def open_fds
        Dir.children("#{PROC}/fd").size - 1
      rescue SystemCallError, IOError
        nil
      end

      # @return [Float, nil] when the process started, in seconds since the epoch: its start
      #   in clock ticks after boot (/proc/self/stat field 22) plus the boot time (/proc/stat).
      def start_time
        fields = File.read("#{PROC}/stat").sub(/\A.*\) /m, "").split # after "(comm) ": field 3 on
        ticks = fields[19].to_i # field 22
        boot = File.foreach("/proc/stat").find { |line| line.start_with?("btime ") }&.split&.last
        boot && boot.to_i + ticks.fdiv(Etc.sysconf(Etc::SC_CLK_TCK))
      rescue SystemCallError, IOError
        nil
      end
    end
  end
end
