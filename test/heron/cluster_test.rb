# frozen_string_literal: true

require "test_helper"
require "net/http"

# Forked workers: serving, respawn, preload and hooks, signal forwarding.
class ClusterTest < Minitest::Test
  PID_APP = <<~RUBY
    $loaded_in ||= Process.pid
    run lambda { |env| [200, { "content-type" => "text/plain" }, ["\#{Process.pid} \#{$loaded_in} \#{ENV['BOOTED']}"]] }
  RUBY

  def get(port)
    Net::HTTP.get(URI("http://127.0.0.1:#{port}/")).split
  end

  def worker_pids(port, count)
    pids = Set.new
    eventually { 30.times { pids << get(port).first }; pids.size >= count }
    pids
  end

  def test_dead_worker_is_restarted_and_signals_are_forwarded
    pid, port, log = spawn_heron(PID_APP, "-w", "2")
    before = worker_pids(port, 2)
    Process.kill("KILL", before.first.to_i)
    eventually { File.read(log).include?("restarting") }
    after = worker_pids(port, 2)
    refute_includes after, before.first
    Process.kill("TERM", pid)
    assert wait_exit(pid)&.success?
    after.each { |worker| assert_raises(Errno::ESRCH) { Process.kill(0, worker.to_i) } }
  end

  def test_preload_loads_once_in_master_and_hooks_run
    config = <<~RUBY
      before_fork { File.write(ENV.fetch("HOOK_LOG"), "before_fork \#{Process.pid}\\n", mode: "a") }
      on_worker_boot { |index| ENV["BOOTED"] = "worker\#{index}" }
    RUBY
    Dir.mktmpdir do |dir|
      File.write(File.join(dir, "heron.rb"), config)
      ENV["HOOK_LOG"] = File.join(dir, "hooks.log")
      pid, port, = spawn_heron(PID_APP, "-w", "2", "--preload", "-C", File.join(dir, "heron.rb"))
      answers = [] # the kernel may hand the first connections all to one worker: ask until both answered
      eventually { 20.times { answers << get(port) }; answers.map(&:last).uniq.size >= 2 }
      assert(answers.all? { |worker, loaded, _| loaded == pid.to_s && worker != pid.to_s }, answers.inspect)
      assert_equal %w[worker0 worker1], answers.map(&:last).uniq.sort
      assert_equal ["before_fork #{pid}"], File.readlines(ENV["HOOK_LOG"], chomp: true)
      Process.kill("TERM", pid)
      assert wait_exit(pid)&.success?
    ensure
      ENV.delete("HOOK_LOG")
    end
  end

  def test_without_preload_each_worker_loads_the_app
    pid, port, = spawn_heron(PID_APP, "-w", "2")
    answers = 10.times.map { get(port) }
    assert(answers.all? { |worker, loaded, _| worker == loaded }, answers.inspect)
    Process.kill("QUIT", pid)
    refute_nil wait_exit(pid)
  end
end
