# frozen_string_literal: true

require "test_helper"
require "json"
require "English"
require "net/http"
require "openssl"
require_relative "../../support/tls_certificates"

# SIGUSR2 on a real `heron`: a new process takes over the listening sockets, the old one drains
# once the new one serves. Counted request by request under an open-loop load.
class HotRestartTest < Minitest::Test
  APP = <<~RUBY
    raise "told to fail" if File.exist?("fail")
    run lambda { |env| [200, { "content-type" => "text/plain" }, [Process.pid.to_s]] }
  RUBY

  def master_from(pidfile)
    eventually { File.exist?(pidfile) && File.read(pidfile).to_i.positive? }
    File.read(pidfile).to_i
  end

  def gone?(pid)
    Process.kill(0, pid)
    false
  rescue Errno::ESRCH
    true
  end

  def restart_under_load(*args)
    old, port, log = spawn_heron(APP, "-q", "--pidfile", "heron.pid", *args)
    pidfile = File.join(File.dirname(log), "heron.pid")
    assert_equal old, master_from(pidfile)
    load = start_load(port, rate: 40)
    wait_for_answers(load)
    Process.kill("USR2", old)
    assert wait_exit(old)&.success?, "the old process drains and exits 0:\n#{File.read(log)}"
    stop_load(load)
    assert_every_request_answered(load)
    fresh = master_from(pidfile)
    refute_equal old, fresh
    [fresh, port, log]
  end

  def stop(pid)
    Process.kill("TERM", pid)
    eventually { gone?(pid) }
  end

  def test_single_mode_hot_restart_loses_no_request
    fresh, port, log = restart_under_load
    assert_equal fresh.to_s, Net::HTTP.get(URI("http://127.0.0.1:#{port}/"))
    assert_match(/hot restart: the new process serves; draining this one/, File.read(log))
    stop(fresh)
  end

  def test_cluster_hot_restart_loses_no_request
    fresh, port, log = restart_under_load("-w", "2")
    worker = Net::HTTP.get(URI("http://127.0.0.1:#{port}/")).to_i
    assert_equal fresh, parent_pid(worker), "a worker of the new master answers"
    assert_match(/hot restart: the new master serves; draining this one/, File.read(log))
    stop(fresh)
  end

  def test_a_new_process_that_fails_to_boot_leaves_the_old_one_serving
    pid, port, log = spawn_heron(APP)
    File.write(File.join(File.dirname(log), "fail"), "")
    Process.kill("USR2", pid)
    eventually { File.read(log).include?("hot restart failed") }
    assert_equal pid.to_s, Net::HTTP.get(URI("http://127.0.0.1:#{port}/"))
    Process.kill("TERM", pid)
    assert wait_exit(pid)&.success?
  end

  def test_a_new_master_that_dies_before_serving_is_noticed_though_its_workers_live_on
    dir = Dir.mktmpdir("heron-hook")
    File.write(File.join(dir, "heron.rb"), <<~RUBY)
      on_worker_boot do
        next unless File.exist?("die")
        trap("TERM", "IGNORE")             # a boot that does not heed PR_SET_PDEATHSIG's SIGTERM
        Process.kill("KILL", Process.ppid) # the new master dies after forking ...
        sleep 20                           # ... while its worker is still booting
      end
    RUBY
    pid, port, log = spawn_heron(APP, "-w", "1", "-C", File.join(dir, "heron.rb"))
    # The banner comes before the workers fork: "die" written now could be seen by the old
    # master's own worker, still in on_worker_boot, which would kill the old master instead.
    # A worker of the old master answering proves its hook has run.
    assert_equal pid, parent_pid(Net::HTTP.get(URI("http://127.0.0.1:#{port}/")).to_i)
    File.write(File.join(File.dirname(log), "die"), "")
    Process.kill("USR2", pid)
    eventually { File.read(log).include?("hot restart failed") }
    assert_equal pid, parent_pid(Net::HTTP.get(URI("http://127.0.0.1:#{port}/")).to_i)
    Process.kill("TERM", pid)
    assert wait_exit(pid)&.success?
  end

  def served_certificate(port, ca)
    TLSCertificates.connect(port, ca) do |ssl|
      ssl.write("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      [ssl.peer_cert.serial, ssl.read[/\r\n\r\n(\d+)\z/, 1].to_i]
    end
  end

  def test_a_tls_listener_is_handed_over_and_the_new_process_loads_new_certificates
    Dir.mktmpdir do |dir|
      paths = TLSCertificates.make(dir, "127.0.0.1")
      cert, key = paths["127.0.0.1"]
      old, _, log = spawn_heron(APP, "-b", "ssl://127.0.0.1:0?#{URI.encode_www_form(cert: cert, key: key)}")
      port = eventually { File.read(log)[%r{https://127\.0\.0\.1:(\d+)}, 1] }.to_i
      first_serial, pid = served_certificate(port, paths["ca"])
      assert_equal old, pid
      TLSCertificates.make(dir, "127.0.0.1") # new files under the same names, same CA file path
      Process.kill("USR2", old)
      assert wait_exit(old)&.success?
      serial, fresh = served_certificate(port, paths["ca"])
      refute_equal old, fresh, "the new process answers on the same TLS port"
      refute_equal first_serial, serial, "with the certificate now on disk"
      Process.kill("TERM", fresh)
      eventually { gone?(fresh) }
    end
  end

  def ctl_stats(url)
    out = IO.popen([RbConfig.ruby, File.join(ProcessHelper::ROOT, "exe/heron"), "ctl", "--control-url", url, "stats"],
                   err: [:child, :out], &:read)
    [$CHILD_STATUS.exitstatus, out]
  end

  # The control address is handed over like the app's: after the old process exits, the same
  # address answers from the new one (no fallback port, no gap where nothing listens).
  def assert_control_handed_over(*args)
    url = "tcp://127.0.0.1:#{free_port}"
    old, _, log = spawn_heron(APP, "--pidfile", "heron.pid", "--control-bind", url, *args)
    eventually { Net::HTTP.get_response(URI("#{url.sub('tcp', 'http')}/health/ready")).code == "200" }
    Process.kill("USR2", old)
    assert wait_exit(old)&.success?, File.read(log)
    fresh = master_from(File.join(File.dirname(log), "heron.pid"))
    refute_match(/control listener .* is in use/, File.read(log), "the new process does not fall back to another port")
    ready = Net::HTTP.get_response(URI("#{url.sub('tcp', 'http')}/health/ready"))
    assert_equal "200", ready.code, ready.body
    status, out = ctl_stats(url)
    assert_equal 0, status, out
    assert_equal fresh, JSON.parse(out)["pid"], "the new process answers on the old control address"
    stop(fresh)
  end

  # An app that, once "slow" exists (the first generation serves by then), announces its boot in
  # "booting" and waits for "go": the hot restart's new process (or its workers) is still loading
  # when the stop arrives.
  SLOW_SECOND_BOOT = <<~RUBY
    if File.exist?("slow")
      File.write("booting", Process.pid.to_s)
      deadline = Time.now + 60
      sleep 0.05 until File.exist?("go") || Time.now > deadline
    end
  RUBY

  # TERM to the old process while the new one boots: the old one used to say "stopped" and exit,
  # and the new one finished booting, re-parented to init, and served the port nobody wanted.
  def assert_a_stop_during_boot_ends_both(*args)
    old, port, log = spawn_heron(SLOW_SECOND_BOOT + APP, "--control-bind", "tcp://127.0.0.1:0", *args)
    dir = File.dirname(log)
    eventually(timeout: 30) { File.read(log).include?("serving (pid #{old})") } # every first worker too
    File.write(File.join(dir, "slow"), "")
    Process.kill("USR2", old)
    booting = eventually(timeout: 30) { File.exist?(File.join(dir, "booting")) && File.read(File.join(dir, "booting")).to_i.nonzero? }
    Process.kill("TERM", old)
    assert_equal 0, wait_exit(old, timeout: 30)&.exitstatus, File.read(log)
    File.write(File.join(dir, "go"), "") # a new process still alive would now finish booting and serve
    eventually(timeout: 30) { gone?(booting) }
    assert_raises(Errno::ECONNREFUSED) { TCPSocket.new("127.0.0.1", port) }
    text = File.read(log)
    assert_match(/hot restart cancelled by the stop/, text)
    refute_match(/EPIPE|serving; the previous process is draining|ERROR/, text)
  end

  def test_a_stop_during_a_single_mode_hot_restarts_boot_ends_both_processes
    assert_a_stop_during_boot_ends_both
  end

  def test_a_stop_during_a_cluster_hot_restarts_boot_ends_both_masters
    assert_a_stop_during_boot_ends_both("-w", "2")
  end

  def test_single_mode_hands_the_control_listener_over
    assert_control_handed_over
  end

  def test_cluster_hands_the_control_listener_over
    assert_control_handed_over("-w", "2")
  end

  # While the new process loads its app it holds the control listener without answering: every
  # probe meanwhile reaches the old process, ready (none meets the new one "booting").
  def test_the_new_process_answers_on_the_control_address_only_once_ready
    url = "tcp://127.0.0.1:#{free_port}"
    held = "sleep 0.05 while File.exist?('hold')\n"
    old, _, log = spawn_heron(held + APP, "--pidfile", "heron.pid", "--control-bind", url)
    dir = File.dirname(log)
    File.write(File.join(dir, "hold"), "")
    Process.kill("USR2", old)
    eventually { File.read(log).scan(/\] INFO control on /).size == 2 } # the new one holds it
    answers = Array.new(20) { JSON.parse(Net::HTTP.get(URI("#{url.sub('tcp', 'http')}/stats"))).values_at("pid", "status") }
    assert_equal [[old, "ready"]], answers.uniq
    File.delete(File.join(dir, "hold"))
    assert wait_exit(old)&.success?, File.read(log)
    fresh = master_from(File.join(dir, "heron.pid"))
    assert_equal [fresh, "ready"], JSON.parse(Net::HTTP.get(URI("#{url.sub('tcp', 'http')}/stats"))).values_at("pid", "status")
    stop(fresh)
  end
end
