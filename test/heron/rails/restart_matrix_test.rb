# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "json"
require_relative "../../support/install_helper"
require_relative "../../support/rails_app"

# Every restart under every launcher, with a real Rails 7.1 app (Rails comes from
# HERON_RAILS_GEM_HOME, which bin/setup-rails fills): `heron`, `rackup -s heron` and
# `bin/rails server -u heron`, one process and a cluster of 2. Each restart (SIGUSR2, SIGUSR1,
# `heron ctl restart`, `heron ctl phased-restart`) happens under an open-loop load (the core's
# load driver, 40 requests/s, a new connection each) that runs until the restart is done (the old
# master gone, or the phased restart logged done) and must get 200 for every request; after
# each, the pidfile (Rails' own tmp/pids/server.pid under `rails server`) is there and names the
# master that serves. In one process SIGUSR1 is ignored (phased restarts need workers), which
# the log says.
class RailsRestartMatrixTest < Minitest::Test
  include InstallHelper
  include RailsApp
  # Each launcher and mode has its own app directory, ports and processes, and the tests mostly
  # wait for Rails to boot: minitest runs them in threads (one per core), after the serial tests.
  parallelize_me!

  CONTROLLER = <<~'RUBY'
    class PidsController < ActionController::API
      def show
        render plain: "#{Process.pid} #{Process.ppid}"
      end
    end
  RUBY

  # HERON_RESTARTS (e.g. `ctl_phased_restart`) runs only those, for bin/repeat-test loops.
  RESTARTS = (ENV["HERON_RESTARTS"]&.split(",")&.map(&:to_sym) || %i[usr2 usr1 ctl_restart ctl_phased_restart]).freeze

  %i[heron rackup rails].each do |launcher|
    { "single" => 0, "cluster" => 2 }.each do |mode, workers|
      define_method("test_every_restart_under_#{launcher}_in_#{mode}_mode") do
        restart_matrix(launcher, workers)
      end
    end
  end

  private

  def restart_matrix(launcher, workers)
    Dir.mktmpdir("heron-rails-restart") do |dir|
      port, control = free_port, free_port
      write_app(dir, workers, control, pidfile: launcher != :rails)
      @launcher, @port = launcher, port
      serving(rails_env("development"), rails_app_command(launcher, "127.0.0.1", port), chdir: dir) do |log|
        get_when_up(port, "/", log)
        pidfile = File.join(dir, "tmp/pids/server.pid")
        master = serving_master(pidfile, log)
        RESTARTS.each { |restart| master = restart_under_load(restart, master, workers, dir, port, pidfile, log) }
      end
    end
  end

  def restart_under_load(restart, master, workers, dir, port, pidfile, log)
    phased = File.read(log).scan("phased restart done").size
    load = start_load(port, rate: 40)
    wait_for_answers(load)
    trigger(restart, master, dir)
    hot = %i[usr2 ctl_restart].include?(restart)
    report = with_log(log, restart) do
      hot ? wait_gone(master, log) : settle_phased(workers, phased, log)
      stop_load(load)
      assert_every_request_answered(load)
    end
    fresh = serving_master(pidfile, log)
    assert_equal(hot, fresh != master, "#{restart}: the master #{hot ? 'is replaced' : 'stays'}")
    record(restart, workers, report)
    fresh
  end

  # Adds the restart's name and the server's log (without Rails' request lines) to a failure.
  def with_log(log, restart)
    yield
  rescue Minitest::Assertion => e
    lines = File.readlines(log).grep_v(/\A(Started|Processing|Completed) |\A\s*\z|\A\h+-\h+ /)
    heron = lines.last(60).join
    raise Minitest::Assertion, "#{@launcher}, #{restart}: #{e.message}\nthe server's own lines:\n#{heron}"
  end

  def trigger(restart, master, dir)
    case restart
    when :usr2 then Process.kill("USR2", master)
    when :usr1 then Process.kill("USR1", master)
    else run!(rails_env("development"), RbConfig.ruby, File.join(ROOT, "exe/heron"), "ctl", restart.to_s.delete_prefix("ctl_").tr("_", "-"), chdir: dir)
    end
  end

  # The old master drains and exits; it is the child of this test only for the first restart.
  def wait_gone(pid, log)
    eventually(timeout: 60) { exited?(pid) }
    assert_match(/hot restart: the new (process|master) serves/, File.read(log))
  end

  def settle_phased(workers, before, log)
    return eventually(timeout: 30) { File.read(log).include?("SIGUSR1 ignored") } if workers.zero?
    eventually(timeout: 60) { File.read(log).scan("phased restart done").size > before }
  end

  # The pidfile names a live process that is the one answering (or the master of the worker that
  # answers); checked after the old processes are gone, so a late removal would show.
  def serving_master(pidfile, log)
    eventually(timeout: 30) { File.exist?(pidfile) && alive?(File.read(pidfile).to_i) }
    master = File.read(pidfile).to_i
    answer = Net::HTTP.get(URI("http://127.0.0.1:#{@port}/")).split.map(&:to_i)
    assert_includes answer, master, "the pidfile names #{master}, the answer came from #{answer}:\n#{File.read(log)[-3000..]}"
    master
  end

  def record(restart, workers, report)
    line = format("%-8s %-7s %-18s sent %3d  200 %3d  failed %d\n", @launcher, workers.zero? ? "single" : "cluster",
                  restart, report["requests"]["sent"], report["status_codes"]["200"].to_i, report["requests"]["sent"] - report["status_codes"]["200"].to_i)
    File.write(ENV["HERON_RESTART_MATRIX"], line, mode: "a") if ENV["HERON_RESTART_MATRIX"]
  end

  def alive?(pid)
    Process.kill(0, pid)
    true
  rescue Errno::ESRCH
    false
  end

  # config/heron.rb: the workers, a control listener for `heron ctl`, no metrics listener (its
  # fixed port may be another test's), and (but under `rails server`, whose own pidfile is the
  # one checked) the pidfile.
  def write_app(dir, workers, control, pidfile:)
    write_rails_app(dir, railties: %w[action_controller], routes: 'root "pids#show"',
                         files: { "app/controllers/pids_controller.rb" => CONTROLLER })
    settings = ["workers #{workers}", "metrics false", %(control_bind "tcp://127.0.0.1:#{control}"), "quiet"]
    settings << %(pidfile "tmp/pids/server.pid") if pidfile
    File.write(File.join(dir, "config/heron.rb"), "#{settings.join("\n")}\n")
  end
end
