# frozen_string_literal: true

require "etc"

module Bench
  # The reader of /proc (Linux) for the bench scripts and the tests: a process's state, parent,
  # CPU time, resident memory (and its shared and private parts) and open descriptors, a process
  # group's CPU time, the load average and the CPU model. A process that exits while it is read
  # counts as nothing (0 or nil), not as an error. (Machine-wide CPU time from /proc/stat is
  # {CpuStat}'s and {CpuTime}'s.)
  module ProcFS
    TICKS = Etc.sysconf(Etc::SC_CLK_TCK).to_f
    private_constant :TICKS

    module_function

    # @param pid [Integer]
    # @return [Array<String>, nil] /proc/PID/stat's fields from the state (field 3) on: the
    #   command name before them is skipped, as it may hold spaces and ")". nil once it exited.
    def stat(pid)
      File.read("/proc/#{pid}/stat").split(") ", 2).last.split
    rescue Errno::ENOENT, Errno::ESRCH
      nil
    end

    # @param pid [Integer]
    # @return [Float] user + system CPU seconds the process has used (0.0 once it exited).
    def cpu_seconds(pid)
      fields = stat(pid) or return 0.0
      cpu_of(fields)
    end

    # @param pgid [Integer] a process group (e.g. the pid of a server started with pgroup: true).
    # @return [Float] user + system CPU seconds of every live process in the group.
    def group_cpu_seconds(pgid)
      Dir.glob("/proc/[0-9]*/stat").sum do |path|
        fields = stat(path[/\d+/].to_i)
        fields && fields[2].to_i == pgid ? cpu_of(fields) : 0.0
      end
    end

    # @return [Hash{Integer => Integer}] every live process's parent pid, by pid.
    def parent_pids
      Dir.glob("/proc/[0-9]*/stat").to_h do |path|
        pid = path[/\d+/].to_i
        [pid, stat(pid)&.[](1).to_i]
      end
    end

    # @param pid [Integer]
    # @return [Integer] the process's resident set size in KiB (VmRSS; 0 once it exited).
    def rss_kb(pid)
      File.read("/proc/#{pid}/status")[/^VmRSS:\s+(\d+)/, 1].to_i
    rescue Errno::ENOENT, Errno::ESRCH
      0
    end

    # @param pid [Integer]
    # @return [Hash{String => Integer}] /proc/PID/smaps_rollup's totals in KiB ("Rss", "Pss",
    #   "Shared_Clean", "Shared_Dirty", "Private_Clean", "Private_Dirty", ...); empty once it exited.
    def smaps_rollup(pid)
      File.foreach("/proc/#{pid}/smaps_rollup").each_with_object({}) do |line, totals|
        name, kib = line.match(/\A(\w+):\s+(\d+) kB/)&.captures
        totals[name] = kib.to_i if name
      end
    rescue Errno::ENOENT, Errno::ESRCH
      {}
    end

    # @param pid [Integer]
    # @return [Integer] how many file descriptors the process has open.
    def open_fds(pid) = Dir.children("/proc/#{pid}/fd").size

    # @return [Array<String>] the 1, 5 and 15 minute load averages, e.g. ["1.20", "0.80", "0.51"].
    def load_averages = File.read("/proc/loadavg").split.first(3)

    # @return [String, nil] the CPU's model name (the first CPU's, from /proc/cpuinfo).
    def cpu_model = File.read("/proc/cpuinfo")[/model name\s*:\s*(.+)/, 1]

    # Fields 14 and 15 (utime, stime) are at 11 and 12 once the first two are skipped.
    def cpu_of(fields) = (fields[11].to_i + fields[12].to_i) / TICKS
    private_class_method :cpu_of
  end
end
