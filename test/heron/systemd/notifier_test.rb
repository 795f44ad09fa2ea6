# frozen_string_literal: true

require "test_helper"
require "net/http"

# sd_notify over a real unix datagram socket bound by the test, as systemd binds NOTIFY_SOCKET.
class NotifierTest < Minitest::Test
  include EnvHelper
  APP = "run lambda { |env| [200, { 'content-type' => 'text/plain' }, [Process.pid.to_s]] }\n"

  def setup
    @dir = Dir.mktmpdir("heron-notify")
    @path = File.join(@dir, "notify.sock")
    @socket = Socket.new(:UNIX, :DGRAM)
    @socket.bind(Socket.sockaddr_un(@path))
  end

  def teardown
    @socket.close
    FileUtils.rm_rf(@dir)
  end

  # @return [Hash{String => String}] the fields of the next datagram.
  def receive(timeout: 15)
    assert @socket.wait_readable(timeout), "no datagram within #{timeout}s"
    @socket.recv(4096).lines(chomp: true).to_h { |line| line.split("=", 2) }
  end

  def receive_until(key, timeout: 15)
    deadline = Time.now + timeout
    loop do
      message = receive(timeout: [deadline - Time.now, 0.1].max)
      return message if message.key?(key)
    end
  end

  def test_messages_go_to_the_socket_and_nothing_is_sent_without_one
    notifier = Heron::Systemd::Notifier.new({ "NOTIFY_SOCKET" => @path })
    assert notifier.ready(status: "1/1 workers serving")
    assert_equal({ "READY" => "1", "STATUS" => "1/1 workers serving" }, receive)
    assert notifier.stopping
    assert_equal({ "STOPPING" => "1" }, receive)
    assert notifier.reloading
    assert_match(/\A\d+\z/, receive.fetch("MONOTONIC_USEC"))
    refute Heron::Systemd::Notifier.new({}).ready
  end

  def test_watchdog_only_when_watchdog_usec_is_set_for_this_pid
    refute Heron::Systemd::Notifier.new({ "NOTIFY_SOCKET" => @path }).watchdog
    other = Heron::Systemd::Notifier.new({ "NOTIFY_SOCKET" => @path, "WATCHDOG_USEC" => "2000000",
                                           "WATCHDOG_PID" => (Process.pid + 1).to_s })
    refute other.watchdog
    notifier = Heron::Systemd::Notifier.new({ "NOTIFY_SOCKET" => @path, "WATCHDOG_USEC" => "2000000" })
    assert_equal 1.0, notifier.watchdog_interval
    assert notifier.watchdog(status: "ok")
    assert_equal({ "WATCHDOG" => "1", "STATUS" => "ok" }, receive)
    refute notifier.watchdog, "not again before half of WATCHDOG_USEC passed"
  end

  def test_cluster_says_ready_once_workers_serve_then_stopping
    pid, port, = with_env("NOTIFY_SOCKET" => @path, "WATCHDOG_USEC" => "1000000") do
      spawn_heron(APP, "-w", "2")
    end
    ready = receive_until("READY")
    assert_equal "2/2 workers serving, 0 connections", ready["STATUS"]
    assert Net::HTTP.get(URI("http://127.0.0.1:#{port}/"))
    assert_equal "1", receive_until("WATCHDOG")["WATCHDOG"]
    Process.kill("USR1", pid)
    assert receive_until("RELOADING").key?("MONOTONIC_USEC")
    assert_equal "1", receive_until("READY")["READY"], "READY=1 again once the phased restart is done"
    Process.kill("TERM", pid)
    assert_equal "1", receive_until("STOPPING")["STOPPING"]
    assert wait_exit(pid)&.success?
  end

  def test_single_mode_hot_restart_sends_reloading_then_ready_with_the_new_main_pid
    pid, port, log = with_env("NOTIFY_SOCKET" => @path, "WATCHDOG_USEC" => "1000000") do
      spawn_heron(APP)
    end
    assert_equal "1", receive_until("READY")["READY"]
    assert_equal "1", receive_until("WATCHDOG")["WATCHDOG"], "the event loop pings the watchdog"
    Process.kill("USR2", pid)
    receive_until("RELOADING")
    ready = receive_until("READY")
    fresh = ready.fetch("MAINPID").to_i
    refute_equal pid, fresh
    assert wait_exit(pid)&.success?
    assert_equal fresh.to_s, Net::HTTP.get(URI("http://127.0.0.1:#{port}/"))
    Process.kill("TERM", fresh)
    assert_equal "1", receive_until("STOPPING")["STOPPING"]
    eventually { exited?(fresh) }
    assert_match(/serving; the previous process is draining/, File.read(log))
  end

  def queued
    messages = []
    messages << receive while @socket.wait_readable(0)
    messages
  end

  def test_after_a_cluster_hot_restart_the_old_master_never_says_stopping
    pid, port, = with_env("NOTIFY_SOCKET" => @path) { spawn_heron(APP, "-w", "1") }
    receive_until("READY")
    Process.kill("USR2", pid)
    receive_until("RELOADING")
    fresh = receive_until("READY").fetch("MAINPID").to_i
    assert wait_exit(pid)&.success?
    refute queued.any? { |message| message.key?("STOPPING") }, "STOPPING=1 would make systemd stop the service"
    refute_equal pid.to_s, Net::HTTP.get(URI("http://127.0.0.1:#{port}/"))
    Process.kill("TERM", fresh)
    assert_equal "1", receive_until("STOPPING")["STOPPING"]
  end
end
