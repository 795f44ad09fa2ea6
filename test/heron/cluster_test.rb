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

  def alive?(pid)
    Process.kill(0, pid.to_i)
    true
  rescue Errno::ESRCH
    false
  end

  def test_master_killed_with_sigkill_leaves_no_worker_and_the_port_free
    pid, port, = spawn_heron(PID_APP, "-w", "2")
    workers = worker_pids(port, 2)
    Process.kill("KILL", pid)
    Process.wait(pid)
    eventually { workers.none? { |worker| alive?(worker) } }
    assert_raises(Errno::ECONNREFUSED) { connect(port) }
    again, = spawn_heron(PID_APP, "-w", "1", "-b", "tcp://127.0.0.1:#{port}")
    eventually { get(port).first != "" }
    Process.kill("TERM", again)
    assert wait_exit(again)&.success?
  end

  def test_ttin_adds_a_worker_and_ttou_retires_one
    pid, port, log = spawn_heron(PID_APP, "-w", "1")
    first = worker_pids(port, 1)
    Process.kill("TTIN", pid)
    both = worker_pids(port, 2)
    assert_operator both, :superset?, first
    Process.kill("TTOU", pid)
    eventually { File.read(log).include?("worker 1 (pid") && File.read(log).include?("removed; draining") }
    extra = (both - first).first
    eventually { !alive?(extra) }
    assert_equal first, 20.times.map { get(port).first }.to_set
    Process.kill("TERM", pid)
    assert wait_exit(pid)&.success?
  end

  def test_phased_restart_replaces_every_worker_without_failing_a_request
    pid, port, log = spawn_heron(PID_APP, "-w", "2", "-q")
    before = worker_pids(port, 2)
    load = start_load(port, rate: 40)
    wait_for_answers(load)
    Process.kill("USR1", pid)
    eventually { File.read(log).include?("phased restart done") }
    stop_load(load)
    assert_every_request_answered(load)
    after = worker_pids(port, 2)
    assert_empty before & after, "every worker was replaced"
    Process.kill("TERM", pid)
    assert wait_exit(pid)&.success?
  end

  STUCK_APP = <<~RUBY
    def stuck_in_a_loop = loop { }
    run lambda { |env|
      stuck_in_a_loop if env["PATH_INFO"] == "/hang"
      [200, { "content-type" => "text/plain" }, [Process.pid.to_s]]
    }
  RUBY

  def test_a_stuck_worker_is_logged_with_its_backtrace_killed_and_replaced
    pid, port, log = spawn_heron(STUCK_APP, "-w", "1", "--worker-timeout", "2")
    stuck = get(port).first
    hang = connect(port) # a raw socket: Net::HTTP would retry the GET on the replacement
    hang.write("GET /hang HTTP/1.1\r\nHost: x\r\n\r\n")
    eventually { (fresh = get_quietly(port)) && fresh != stuck }
    text = File.read(log)
    assert_match(/worker 0 \(pid #{stuck}\) has not ticked for 2.0s/, text)
    assert_match(/config\.ru:1:in `stuck_in_a_loop'/, text)
    refute alive?(stuck)
    assert closed_by_server?(hang, timeout: 1), "the stuck request's connection is gone"
    Process.kill("TERM", pid)
    assert wait_exit(pid)&.success?
  end

  def get_quietly(port)
    Net::HTTP.start("127.0.0.1", port, open_timeout: 1, read_timeout: 1) { |http| http.get("/").body }
  rescue StandardError
    nil
  end

  def test_a_worker_that_does_not_boot_in_time_is_killed_and_retried
    slow = "sleep 30 if File.exist?('slow')\n#{PID_APP}"
    pid, port, log = spawn_heron(slow, "-w", "1", "--worker-boot-timeout", "1")
    dir = File.dirname(log)
    # The banner comes before the workers fork and load the app: "slow" written now could make
    # the first worker slow too. It has loaded the app once it answers.
    first = get(port).first
    File.write(File.join(dir, "slow"), "")
    Process.kill("USR1", pid) # the replacement boots slowly; the old worker keeps serving
    eventually { File.read(log).include?("has not started serving for 1.0s") }
    assert_equal first, get(port).first, "the old worker still serves"
    File.delete(File.join(dir, "slow"))
    eventually { File.read(log).include?("phased restart done") }
    Process.kill("TERM", pid)
    assert wait_exit(pid)&.success?
  end

  def test_a_worker_above_max_memory_is_replaced_gracefully
    pid, port, log = spawn_heron(PID_APP, "-w", "1", "-q", "--worker-max-memory", "1000000")
    load = start_load(port, rate: 20, seconds: 8)
    assert_every_request_answered(load)
    text = File.read(log)
    replaced = text.scan(/worker 0 \(pid (\d+)\) uses \d+ bytes, above worker_max_memory 1000000/).flatten
    assert_operator replaced.size, :>=, 2, text
    replaced.each { |old| assert_includes text, "worker 0 (pid #{old}) replaced by pid" }
    Process.kill("TERM", pid)
    assert wait_exit(pid)&.success?
  end

  def test_hup_reopens_the_log_file_in_master_and_workers
    pid, port, stdout = spawn_heron(PID_APP, "-w", "1", "--log-file", "heron-file.log", "--pidfile", "heron.pid",
                                    banner_in: "heron-file.log")
    dir = File.dirname(stdout)
    begin
      path = File.join(dir, "heron-file.log")
      get(port)
      eventually { File.exist?(File.join(dir, "heron.pid")) }
      assert_equal pid, File.read(File.join(dir, "heron.pid")).to_i
      File.rename(path, "#{path}.1")
      Process.kill("HUP", pid)
      # The master reopens, then forwards HUP to the worker, which reopens on its own thread
      # later: both say so in the new file (until the worker's line, its requests may still
      # be logged to heron-file.log.1).
      eventually { File.exist?(path) && File.read(path).scan("log file reopened").size >= 2 }
      get(port)
      eventually { File.read(path).include?('"GET / HTTP/1.1" 200') }
      Process.kill("TERM", pid)
      assert wait_exit(pid)&.success?
      refute File.exist?(File.join(dir, "heron.pid")), "pidfile removed on exit"
      assert_empty File.read(stdout), "nothing went to stdout/stderr"
    end
  end

  def test_a_booting_worker_survives_the_masters_signals_sent_to_the_process_group
    Dir.mktmpdir do |dir|
      File.write(File.join(dir, "heron.rb"), "on_worker_boot { File.write('booting', ''); sleep 2 }\n")
      pid, port, log = spawn_heron(PID_APP, "-w", "1", "-C", File.join(dir, "heron.rb"))
      eventually { File.exist?(File.join(File.dirname(log), "booting")) }
      worker = `ps -o pid= --ppid #{pid}`.split.first
      %w[HUP USR1 USR2 TTIN TTOU].each { |signal| Process.kill(signal, worker.to_i) }
      assert_equal worker, get(port).first
      refute_match(/exited|failed/, File.read(log))
      Process.kill("TERM", pid)
      assert wait_exit(pid)&.success?
    end
  end

  ACCEPT_KILLER_APP = <<~RUBY
    run lambda { |env|
      if env["PATH_INFO"] == "/stop-accepting" # what an accept loop that raised looks like to the reactor
        Async::Task.current.parent.children.each { |task| task.stop if task.annotation == "heron accept" }
      end
      [200, { "content-type" => "text/plain" }, [Process.pid.to_s]]
    }
  RUBY

  def test_a_worker_whose_accept_loop_died_is_replaced
    pid, port, log = spawn_heron(ACCEPT_KILLER_APP, "-w", "1")
    first = get(port).first
    assert_equal first, Net::HTTP.get(URI("http://127.0.0.1:#{port}/stop-accepting"))
    eventually { (fresh = get_quietly(port)) && fresh != first }
    assert_match(/worker 0: an accept loop ended; draining/, File.read(log))
    Process.kill("TERM", pid)
    assert wait_exit(pid)&.success?
  end
end
