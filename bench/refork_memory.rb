# frozen_string_literal: true

# Memory of a forked cluster, before and after a refork (`refork_after`): a Heron cluster with
# `preload_app!` and W workers serves the same warm-up traffic twice, once from workers forked by
# the master and once from workers forked by the mold (a worker promoted after the first warm-up:
# `kill -URG MASTER`, which is `heron ctl refork`). After each warm-up every process's
# /proc/PID/smaps_rollup is read: RSS, PSS (each shared page divided among the processes
# sharing it) and the private part (Private_Clean + Private_Dirty: pages no other process
# shares). The cluster's own cost is the sum of PSS over master, mold and workers.
#
#   bundle exec ruby bench/refork_memory.rb [--apps demo,rails] [--workers 4] [--warm SECONDS] [--yjit off,on]
#
# demo: examples/demo (its /users JSON, /hello and /foo). rails: a Rails 7.1 API app (Active Record on
# SQLite, lazily loaded constants: eager_load off), written like test/support/rails_app.rb's;
# needs HERON_RAILS_GEM_HOME (bin/setup-rails). Each app runs with YJIT off and on (RUBYOPT=--yjit)
# unless --yjit says which.

require "json"
require "optparse"
require "tmpdir"
require "fileutils"
require "net/http"
require "rbconfig"
require_relative "lib/server_process"
require_relative "lib/proc_fs"
require_relative "lib/clock"
require_relative "lib/results_page"
require_relative "../test/support/rails_app"

module Bench
  # Runs each app's cluster, warms it, reforks it, warms it again, and prints the memory table.
  class ReforkMemory
    ROOT = File.expand_path("..", __dir__)
    KINDS = %w[master mold worker].freeze

    def initialize(argv)
      @apps = %w[demo rails]
      @workers = 4
      @warm = 10
      @yjit = %w[off on]
      OptionParser.new do |o|
        o.on("--apps LIST", Array, "demo,rails") { |v| @apps = v }
        o.on("--workers N", Integer, "workers (default 4)") { |v| @workers = v }
        o.on("--warm SECONDS", Integer, "warm-up traffic per phase (default 10)") { |v| @warm = v }
        o.on("--yjit MODES", Array, "off,on (default both)") { |v| @yjit = v }
      end.parse!(argv)
    end

    def run
      puts "#{@workers} workers, preload_app!, refork_after 0 (refork on SIGURG); #{@warm} s of wrk -t2 -c64 per path per phase (repeated, up to 3 times, until every worker answered a tenth of the mean); " \
           "#{RUBY_DESCRIPTION}"
      puts "| app | phase | process | requests answered | RSS MiB | PSS MiB | private MiB | shared MiB |"
      puts "|---|---|---|---:|---:|---:|---:|---:|"
      summaries = @apps.product(@yjit).filter_map { |app, yjit| measure(app, yjit == "on") }
      puts "", "| app | workers forked from | mean private MiB per worker | mean PSS MiB per worker | cluster PSS MiB (master + mold + workers) |"
      puts "|---|---|---:|---:|---:|"
      summaries.flatten(1).each { |row| puts "| #{row.join(' | ')} |" }
    end

    private

    def measure(name, yjit)
      app = "#{name}#{', YJIT' if yjit}"
      Dir.mktmpdir("heron-refork-memory") do |dir|
        spec = setup(name, dir) or return nil
        argv, chdir, env, paths = spec
        port = ServerProcess.free_port
        env = env.merge("RUBYOPT" => "#{env.fetch('RUBYOPT', ENV.fetch('RUBYOPT', nil))} --yjit".strip) if yjit
        server = ServerProcess.new(argv + ["-b", "tcp://127.0.0.1:#{port}"], port: port, log: File.join(dir, "server.log"), chdir: chdir, env: env)
        server.start(timeout: 120)
        master = server.pid
        summary = phases(app, server, master, paths, File.join(dir, "server.log"))
        server.stop
        summary
      ensure
        server&.stop
      end
    end

    def phases(app, server, master, paths, log)
      wait_for_workers(master, nil)
      @control = File.read(log)[%r{Control on (tcp://127\.0\.0\.1:\d+)}, 1]
      warm(server, paths)
      before = report(app, "forked from the master", master, nil)
      Process.kill("URG", master)
      mold = wait_for_refork(master, log)
      warm(server, paths)
      after = report(app, "forked from the mold", master, mold)
      [before, after]
    end

    # @return [Hash{Integer => Integer}] requests answered by each worker, from /stats.
    def served
      JSON.parse(Net::HTTP.get(URI("#{@control.sub('tcp://', 'http://')}/stats"))).fetch("requests_by_worker", {}).transform_keys(&:to_i)
    rescue StandardError
      {}
    end

    # @return [Array(Array<String>, String, Hash, Array<String>)] argv, directory, env, paths
    def setup(app, dir)
      common = ["-w", @workers.to_s, "--preload", "--refork-after", "0", "-e", "production", "--control-bind", "tcp://127.0.0.1:0"]
      case app
      when "demo"
        system(RbConfig.ruby, "examples/demo/db/setup.rb", chdir: ROOT, out: File::NULL, exception: true)
        [%w[bundle exec] + [File.join(ROOT, "exe/heron")] + common + ["config.ru"], File.join(ROOT, "examples/demo"), {}, %w[/users /hello /foo]]
      when "rails" then rails(dir, common)
      end
    end

    def rails(dir, common)
      gems = ENV["HERON_RAILS_GEM_HOME"] or return warn("rails: skipped (set HERON_RAILS_GEM_HOME)")
      RailsApp.write(dir, railties: %w[active_record action_controller], routes: 'root "queries#show"', files: RailsApp::QUERIES_APP)
      env = RailsApp.env(gems, "production").merge("BUNDLE_GEMFILE" => nil, "RUBYOPT" => nil)
      [[RbConfig.ruby, File.join(ROOT, "exe/heron")] + common + ["config.ru"], dir, env, ["/"]]
    end

    # wrk on each path in turn, again (up to 3 rounds) while a worker has answered less than a
    # tenth of the mean: the kernel hands a shared listener's connections out unevenly.
    def warm(server, paths)
      3.times do
        paths.each { |path| system("wrk", "-t2", "-c64", "-d#{@warm}s", server.url(path), out: File::NULL, exception: true) }
        sleep 1.5 # a heartbeat carries the counts
        counts = served.values
        break if counts.size >= @workers && counts.min * 10 >= counts.sum / counts.size
      end
    end

    def children(master) = ProcFS.parent_pids.select { |_, parent| parent == master }.keys

    def wait_for_workers(master, mold)
      deadline = Clock.now + 120
      sleep(0.2) until children(master).size >= @workers + (mold ? 1 : 0) || Clock.now > deadline
    end

    # The mold's pid, once every worker is one it forked.
    def wait_for_refork(master, log)
      deadline = Clock.now + 180
      until Clock.now > deadline
        text = File.read(log)
        mold = text[/mold generation 1 ready \(pid (\d+)\)/, 1]&.to_i
        replaced = text.scan(/replaced by pid/).size
        return mold if mold && replaced >= @workers - 1 && children(master).size == @workers + 1
        sleep 0.2
      end
      raise "refork did not finish; see #{log}"
    end

    def report(app, phase, master, mold)
      workers = children(master) - [mold]
      rows = [["master", master]] + (mold ? [["mold", mold]] : []) + workers.sort.map { |pid| ["worker", pid] }
      counts = served
      totals = rows.map { |kind, pid| [kind, memory(pid), counts[pid]] }
      totals.each do |kind, m, count|
        puts "| #{app} | #{phase} | #{kind} | #{count || '-'} | #{mib(m['Rss'])} | #{mib(m['Pss'])} | #{mib(private_kib(m))} | #{mib(shared_kib(m))} |"
      end
      worker_rows = totals.select { |kind, _| kind == "worker" }.map { |_, m, _| m }
      [app, phase.sub("forked from ", ""), mib(mean(worker_rows) { |m| private_kib(m) }), mib(mean(worker_rows) { |m| m["Pss"].to_i }),
       mib(totals.sum { |_, m| m["Pss"].to_i })]
    end

    def memory(pid) = ProcFS.smaps_rollup(pid)
    def private_kib(memory) = memory["Private_Clean"].to_i + memory["Private_Dirty"].to_i
    def shared_kib(memory) = memory["Shared_Clean"].to_i + memory["Shared_Dirty"].to_i
    def mean(rows, &block) = rows.empty? ? 0 : rows.sum(&block) / rows.size
    def mib(kib) = (kib / 1024.0).round(1)
  end
end

if $PROGRAM_NAME == __FILE__
  Bench::ResultsPage.capture("refork_memory.md")
  Bench::ReforkMemory.new(ARGV).run
end
