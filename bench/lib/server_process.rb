# frozen_string_literal: true

require "socket"
require_relative "clock"
require_relative "proc_fs"

module Bench
  # One server under test: spawned in its own process group, waited for until its port accepts,
  # stopped with TERM (then KILL after a grace period). Output goes to a log file.
  class ServerProcess
    attr_reader :pid, :port, :argv

    def self.free_port
      server = TCPServer.new("127.0.0.1", 0)
      server.addr[1]
    ensure
      server&.close
    end

    # @param host [String] the address the server listens on (127.0.0.1 unless told).
    def initialize(argv, port:, log:, chdir:, env: {}, rlimit_nofile: nil, host: "127.0.0.1")
      @argv = argv
      @port = port
      @host = host
      @log = log
      @chdir = chdir
      @env = env
      @rlimit_nofile = rlimit_nofile
    end

    def url(path = "/")
      "http://#{@host}:#{@port}#{path}"
    end

    def start(timeout: 30)
      options = { chdir: @chdir, out: @log, err: %i[child out], pgroup: true }
      options[:rlimit_nofile] = @rlimit_nofile if @rlimit_nofile
      @pid = Process.spawn(@env, *@argv, **options)
      deadline = Clock.now + timeout
      until listening?
        raise "server exited early (#{@argv.join(' ')}); see #{@log}" if Process.wait(@pid, Process::WNOHANG)
        give_up("server did not listen on #{@port} within #{timeout}s; see #{@log}") if Clock.now > deadline

        sleep 0.1
      end
      self
    end

    def stop(grace: 10)
      return unless @pid

      signal(:TERM)
      deadline = Clock.now + grace
      until Process.wait(@pid, Process::WNOHANG)
        if Clock.now > deadline
          signal(:KILL)
          Process.wait(@pid)
          break
        end
        sleep 0.1
      end
    rescue Errno::ECHILD
      nil
    ensure
      @pid = nil
    end

    # Resident set size in KiB, from /proc/PID/status.
    def rss_kb = ProcFS.rss_kb(@pid)

    # {#rss_kb} once two readings a second apart differ by less than `tolerance` (a fraction);
    # with `tree`, {#tree_rss_kb} (a server that forks its workers, as Falcon does).
    def settled_rss_kb(tolerance: 0.01, tree: false)
      previous = tree ? tree_rss_kb : rss_kb
      loop do
        sleep 1
        current = tree ? tree_rss_kb : rss_kb
        return current if (current - previous).abs < previous * tolerance
        previous = current
      end
    end

    # User plus system CPU seconds of the server process (all its threads), from /proc/PID/stat.
    def cpu_seconds = ProcFS.cpu_seconds(@pid)

    # User plus system CPU seconds of the server and every process below it (forked workers,
    # containers), from /proc/PID/stat; a child that already exited is not counted.
    def tree_cpu_seconds
      tree_pids.sum { |pid| ProcFS.cpu_seconds(pid) }
    end

    # Resident set size in KiB of the server and every process below it.
    def tree_rss_kb
      tree_pids.sum { |pid| ProcFS.rss_kb(pid) }
    end

    # Seconds the server's threads have run on a CPU (user and system, in nanoseconds), summed
    # over the threads alive now, from /proc/PID/task/*/schedstat: finer than {#cpu_seconds}'s
    # clock ticks, for servers whose threads live through the measurement.
    def on_cpu_seconds = schedstat_seconds(0)

    # Seconds the server's threads spent runnable but waiting for a CPU (run-queue delay), summed
    # over the threads alive now, from /proc/PID/task/*/schedstat.
    def run_queue_seconds = schedstat_seconds(1)

    # {#run_queue_seconds} over the server and every process below it (Falcon's container child).
    def tree_run_queue_seconds = tree_pids.sum { |pid| schedstat_seconds(1, pid) }

    # Pins every thread of the server to the given CPU list (taskset syntax, e.g. "0").
    def pin(cpus)
      system("taskset", "-a", "-pc", cpus.to_s, @pid.to_s, out: File::NULL, exception: true)
    end

    private

    # Stops the server that did not come up (left running, a callgrind one went on using a CPU
    # of a shared machine after its bench had failed), then raises.
    def give_up(message)
      stop(grace: 5)
      raise message
    end

    def schedstat_seconds(field, pid = @pid)
      Dir.glob("/proc/#{pid}/task/*/schedstat").sum do |path|
        File.read(path).split[field].to_i
      rescue Errno::ENOENT, Errno::ESRCH
        0
      end / 1e9
    end

    # The server's pid and its descendants', from the parent pids in /proc/*/stat.
    def tree_pids
      parents = ProcFS.parent_pids
      tree = [@pid]
      tree.each { |pid| tree.concat(parents.select { |_, ppid| ppid == pid }.keys) }
      tree
    end

    def signal(name)
      Process.kill(name, -@pid)
    rescue Errno::ESRCH
      nil
    end

    def listening?
      Socket.tcp(@host, @port, connect_timeout: 1).close
      true
    rescue SystemCallError
      false
    end
  end
end
