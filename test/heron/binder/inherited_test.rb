# frozen_string_literal: true

require "test_helper"
require "net/http"

# Listeners Heron finds open at start-up: systemd socket activation (through Debian's real
# `systemd-socket-activate`) and a hot restart's HERON_LISTEN_FDS.
class InheritedTest < Minitest::Test
  APP = "run lambda { |env| [200, { 'content-type' => 'text/plain' }, ['activated ' + Process.pid.to_s]] }\n"

  def spawn_activated(dir, port, *args)
    File.write(File.join(dir, "config.ru"), APP)
    log = File.join(dir, "heron.log")
    output = File.open(log, "a")
    pid = Process.spawn("systemd-socket-activate", "-l", "127.0.0.1:#{port}", "--fdname=web",
                        RbConfig.ruby, File.join(ProcessHelper::ROOT, "exe/heron"), "-e", "production",
                        "-b", "tcp://127.0.0.1:#{free_port}", *args, "config.ru",
                        chdir: dir, out: output, err: output, pgroup: true)
    output.close
    (@spawned_groups ||= []) << pid
    eventually { File.read(log).include?("Listening on 127.0.0.1:#{port}") }
    [pid, log]
  end

  def test_socket_activation_serves_the_socket_systemd_passed_and_ignores_the_binds
    Dir.mktmpdir do |dir|
      port = free_port
      pid, log = spawn_activated(dir, port)
      # systemd-socket-activate starts Heron on the first connection: it must be answered.
      response = Net::HTTP.get_response(URI("http://127.0.0.1:#{port}/"))
      assert_equal ["200", "activated #{pid}"], [response.code, response.body], File.read(log)
      text = File.read(log)
      assert_match %r{\* Listening on http://127\.0\.0\.1:#{port}$}, text
      assert_match %r{bind tcp://127\.0\.0\.1:\d+ ignored: serving the sockets systemd passed}, text
      assert_equal 1, text.scan("* Listening on").size, "the configured bind was not opened"
      Process.kill("TERM", pid)
      assert wait_exit(pid)&.success?
    end
  end

  def test_socket_activation_in_cluster_mode
    Dir.mktmpdir do |dir|
      port = free_port
      pid, log = spawn_activated(dir, port, "-w", "2")
      response = Net::HTTP.get_response(URI("http://127.0.0.1:#{port}/"))
      assert_equal "200", response.code, File.read(log)
      refute_equal "activated #{pid}", response.body, "a worker answers"
      Process.kill("TERM", pid)
      assert wait_exit(pid)&.success?
    end
  end

  def test_listen_fds_for_another_pid_are_not_taken
    server = TCPServer.new("127.0.0.1", 0)
    env = { "LISTEN_FDS" => "1", "LISTEN_PID" => (Process.pid + 1).to_s }
    assert_empty Heron::Binder::Inherited.new(env).systemd
    assert_empty Heron::Binder::Inherited.new({}).systemd
  ensure
    server&.close
  end

  def test_a_hot_restart_hands_over_by_bind_uri_and_closes_binds_no_longer_configured
    kept = TCPServer.new("127.0.0.1", 0)
    dropped = TCPServer.new("127.0.0.1", 0)
    [kept, dropped].each { |io| io.autoclose = false } # the binder closes their descriptors
    json = JSON.generate(kept.fileno.to_s => "tcp://127.0.0.1:0", dropped.fileno.to_s => "tcp://127.0.0.1:1")
    binder = Heron::Binder.new(["tcp://127.0.0.1:0"],
                               inherited: Heron::Binder::Inherited.new("HERON_LISTEN_FDS" => json))
    listener, = binder.bind
    assert_equal kept.local_address.ip_port, listener.local_address.ip_port
    assert_raises(Errno::EBADF) { dropped.local_address }
    assert_equal({ "tcp://127.0.0.1:0" => listener }, binder.by_key)
  ensure
    binder&.close
  end

  def test_a_listen_fds_descriptor_that_is_not_a_socket_fails_start_up_clearly
    Dir.mktmpdir do |dir|
      File.write(File.join(dir, "config.ru"), APP)
      reader, writer = IO.pipe
      heron = [RbConfig.ruby, File.join(ProcessHelper::ROOT, "exe/heron"), "-e", "production", "config.ru"]
      output = IO.popen(["sh", "-c", 'LISTEN_PID=$$ LISTEN_FDS=1 exec "$@"', "sh", *heron,
                         { 3 => reader, err: %i[child out], chdir: dir }], &:read)
      refute $?.success?
      assert_match(/could not start: LISTEN_FDS=1: descriptor 3 is not a listening socket/, output)
    ensure
      [reader, writer].each { |io| io&.close }
    end
  end

  def test_a_bad_handover_variable_is_a_clear_bind_error
    error = assert_raises(Heron::BindError) { Heron::Binder::Inherited.new("HERON_LISTEN_FDS" => "{nope") }
    assert_match(/HERON_LISTEN_FDS "\{nope" is not usable/, error.message)
  end

  def test_a_handed_over_unix_socket_file_stays_for_the_new_process
    Dir.mktmpdir do |dir|
      path = File.join(dir, "app.sock")
      binder = Heron::Binder.new(["unix://#{path}"], inherited: Heron::Binder::Inherited.new({}))
      binder.bind
      binder.handed_over!
      binder.close
      assert File.socket?(path), "the new process still serves it"
      again = Heron::Binder.new(["unix://#{path}"], inherited: Heron::Binder::Inherited.new({}))
      again.bind
      again.close
      refute File.exist?(path), "without a handover, close removes it"
    end
  end
end
