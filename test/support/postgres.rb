# frozen_string_literal: true

require_relative "free_port"

require "tmpdir"
require "fileutils"
require "socket"

# A throwaway PostgreSQL cluster for the tests: initdb into a temporary directory, started once
# per test process on a free loopback port with durability off (fsync, synchronous_commit), and
# stopped when the tests are done. initdb refuses to run as root, so as root the cluster belongs
# to the `postgres` user and its commands run through `runuser`. Without PostgreSQL installed,
# {.url} raises: the tests that need it fail (bin/setup installs it), they are not skipped.
module TestPostgres
  OPTIONS = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c listen_addresses=127.0.0.1"
  LOCK = Mutex.new

  class << self
    # @return [String] a Sequel connection URL for the cluster's `postgres` database.
    def url
      LOCK.synchronize { @url ||= start }
    end

    # @return [String] the directory holding initdb and pg_ctl.
    def bin_dir
      dir = ENV["HERON_PG_BIN"] || Dir["/usr/lib/postgresql/*/bin"].max_by { |path| path[/\d+/].to_i }
      return dir if dir && File.executable?(File.join(dir, "initdb"))
      raise "PostgreSQL is not installed (no initdb under /usr/lib/postgresql/*/bin); run bin/setup"
    end

    private

    def start
      @dir = Dir.mktmpdir("heron-pg")
      port = FreePort.free_port
      FileUtils.chown("postgres", "postgres", @dir) if root?
      run("initdb", "-D", data_dir, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8")
      # -t 300: pg_ctl gives up after 60 s by default, which a loaded machine can take to start it.
      run("pg_ctl", "-D", data_dir, "-l", "#{@dir}/log", "-w", "-t", "300", "-o", "#{OPTIONS} -p #{port} -k #{@dir}", "start")
      stop_at_exit
      "postgres://postgres@127.0.0.1:#{port}/postgres"
    end

    def data_dir
      "#{@dir}/data"
    end

    def stop_at_exit
      stop = -> { stop_cluster }
      defined?(Minitest) ? Minitest.after_run(&stop) : at_exit(&stop)
    end

    def stop_cluster
      run("pg_ctl", "-D", data_dir, "-m", "immediate", "-w", "stop")
    ensure
      FileUtils.rm_rf(@dir)
    end

    def run(command, *args)
      argv = [File.join(bin_dir, command), *args]
      argv = ["runuser", "-u", "postgres", "--", *argv] if root?
      output = IO.popen(argv, err: %i[child out], &:read)
      raise "PostgreSQL #{command} failed: #{output}" unless $?.success?
    end

    def root?
      Process.uid.zero?
    end
  end
end
