# frozen_string_literal: true

require "fileutils"
require "net/http"
require "open3"
require "rbconfig"

# Helpers for tests that install Heron the way a user does (a built gem, a `path:` checkout) and
# start it as a separate process outside the repository's bundle.
module InstallHelper
  ROOT = File.expand_path("../..", __dir__)

  # Copies what a source checkout has (no compiled extension) into `dir`: the server's files and
  # heron-profiler's, in heron-profiler/.
  # @return [String] `dir`.
  def copy_checkout(dir)
    files = Dir.chdir(ROOT) do
      Dir["{lib/**/*.rb,ext/heron/*.{c,h,rb},exe/*,heron.gemspec,README.md,CHANGELOG.md,LICENSE,docs/*.md}"] +
        Dir["heron-profiler/{lib/**/*.rb,ext/heron_profiler/*.{c,h,rb},heron-profiler.gemspec,README.md,CHANGELOG.md,LICENSE,docs/*.md}"]
    end
    files.each do |file|
      FileUtils.mkdir_p(File.join(dir, File.dirname(file)))
      FileUtils.cp(File.join(ROOT, file), File.join(dir, file))
    end
    dir
  end

  # Writes files (relative path => text) under `dir`, making their directories.
  # @return [void]
  def write_files(dir, files)
    files.each do |path, text|
      FileUtils.mkdir_p(File.dirname(File.join(dir, path)))
      File.write(File.join(dir, path), text)
    end
  end

  # Runs a command outside the repository's bundle; fails the test when it fails.
  # @return [String] its stdout and stderr.
  def run!(env, *argv, chdir:)
    output, status = Open3.capture2e(unbundled(env), *argv, chdir: chdir, unsetenv_others: true)
    assert status.success?, "#{argv.join(' ')} failed:\n#{output}"
    output
  end

  # Starts a server command outside the bundle, yields its log path, then stops it with TERM.
  def serving(env, argv, chdir:)
    log = File.join(chdir, "server.log")
    pid = Process.spawn(unbundled(env), *argv, chdir: chdir, %i[out err] => log, pgroup: true, unsetenv_others: true)
    @serving_pid = pid
    yield log
  ensure
    if pid
      Process.kill("TERM", -pid) rescue nil
      begin
        wait_exit(pid)
      rescue Errno::ECHILD
        nil # already reaped by get_when_up
      end
      wait_group_gone(pid)
    end
  end

  # After a hot restart the serving master is no longer `pid` but another member of its process
  # group: waits (bounded) until every member has exited, so none still writes into the app's
  # directory when the test removes it.
  def wait_group_gone(pgid, timeout: 60)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
    while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
      Process.kill(0, -pgid)
      sleep 0.05
    end
  rescue Errno::ESRCH, Errno::EPERM
    nil
  end

  # GETs a path, retrying while the server is still starting.
  # @return [Net::HTTPResponse]
  def get_when_up(port, path, log, timeout: 60)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
    begin
      Net::HTTP.start("127.0.0.1", port, open_timeout: 2, read_timeout: 30) { |http| http.get(path) }
    rescue Errno::ECONNREFUSED, Errno::ECONNRESET, Net::OpenTimeout
      flunk("server exited:\n#{File.read(log)}") if @serving_pid && Process.wait(@serving_pid, Process::WNOHANG)
      flunk("server did not answer:\n#{File.read(log)}") if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      sleep 0.2
      retry
    end
  end

  private

  # The whole environment of a child outside the bundle: this process's own before Bundler
  # changed it, with `env` over it (nil unsets). Given to spawn with unsetenv_others, where
  # Bundler.with_unbundled_env would swap ENV itself, which tests running in threads share.
  # @return [Hash{String => String, nil}]
  def unbundled(env) = Bundler.unbundled_env.merge(env)
end
