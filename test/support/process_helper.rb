# frozen_string_literal: true

require "tmpdir"
require "rbconfig"
require_relative "../../bench/lib/proc_fs" # the one /proc reader of the bench and the tests

# Runs `exe/heron` as a real child process for lifecycle tests (signals, workers, exit codes).
# Every wait is a handshake (a banner, an exit status, a condition) bounded by {PATIENCE}: a
# bound is only reached when something is broken, so it is set for a machine whose two cores
# run several suites at once (load average 15, where a `heron` with coverage on takes 15 s and
# more to print its banner), not for an idle one.
module ProcessHelper
  ROOT = File.expand_path("../..", __dir__)
  # Seconds a process is given to start, to exit, or to reach a state.
  PATIENCE = 90

  # Starts heron with a rackup file written from `ru_source`.
  # @param ru_source [String] the config.ru contents.
  # @param args [Array<String>] extra CLI arguments.
  # @param banner_in [String, nil] a file name (in the test's directory) the banner goes to
  #   instead of the combined stdout/stderr log (for `--log-file`).
  # @param spawn_options [Hash] extra Process.spawn options (e.g. rlimit_nofile: 64).
  # @return [Array(Integer, Integer, String)] pid, port, path of the combined log.
  def spawn_heron(ru_source, *args, banner_in: nil, **spawn_options)
    dir = Dir.mktmpdir("heron-test")
    File.write(File.join(dir, "config.ru"), ru_source)
    log = File.join(dir, "heron.log")
    boot = File.join(ROOT, "test/support/coverage_boot.rb")
    # stderr shares stdout's open file (and offset): two opens of the log would overwrite each other.
    pid = Process.spawn(RbConfig.ruby, "-r", boot, File.join(ROOT, "exe/heron"), "-b", "tcp://127.0.0.1:0",
                        "-e", "production", *args, "config.ru",
                        chdir: dir, out: log, err: [:child, :out], pgroup: true, **spawn_options)
    (@spawned_groups ||= []) << pid
    [pid, wait_for_port(banner_in ? File.join(dir, banner_in) : log, pid), log]
  end

  # After each test, SIGKILLs what is left of the process groups it spawned (a failed assertion
  # must not leave servers, or the masters a hot restart started in the same group, behind).
  def after_teardown
    super
    (@spawned_groups || []).each do |group|
      Process.kill("KILL", -group)
    rescue Errno::ESRCH, Errno::EPERM
      nil
    end
  end

  # Waits for the banner's listening address.
  # @return [Integer] the port.
  def wait_for_port(log, pid, timeout: PATIENCE)
    deadline = Time.now + timeout
    until Time.now > deadline
      port = File.read(log)[%r{http://127\.0\.0\.1:(\d+)}, 1] if File.exist?(log)
      return port.to_i if port
      flunk("heron exited early:\n#{File.read(log)}") if Process.wait(pid, Process::WNOHANG)
      sleep 0.05
    end
    flunk("heron did not start:\n#{File.read(log)}")
  end

  # Waits for a child to exit.
  # @return [Process::Status, nil] nil when it did not exit in time (it is then killed).
  def wait_exit(pid, timeout: PATIENCE)
    deadline = Time.now + timeout
    until Time.now > deadline
      _, status = Process.wait2(pid, Process::WNOHANG)
      return status if status
      sleep 0.05
    end
    Process.kill("KILL", -pid) rescue nil
    nil
  end

  # Stops a heron started by {#spawn_heron} gracefully (TERM) and waits for it; nothing when it
  # never started or is already gone.
  # @return [Process::Status, nil]
  def stop_heron(pid)
    return unless pid
    Process.kill("TERM", pid)
    wait_exit(pid)
  rescue Errno::ESRCH, Errno::ECHILD
    nil
  end

  # @param pid [Integer]
  # @return [Integer, nil] the process's parent pid, nil once it is gone.
  def parent_pid(pid) = Bench::ProcFS.stat(pid)&.[](1)&.to_i

  # @param pid [Integer]
  # @return [Boolean] whether the process has exited: gone, or a zombie its parent has not waited for.
  def exited?(pid)
    state = Bench::ProcFS.stat(pid)&.first
    state.nil? || state == "Z"
  end

  # Waits until the block is true.
  def eventually(timeout: PATIENCE)
    deadline = Time.now + timeout
    until (result = yield)
      flunk("condition not met in #{timeout}s") if Time.now > deadline
      sleep 0.05
    end
    result
  end
end

Minitest::Test.include(ProcessHelper)
