# frozen_string_literal: true

require "test_helper"

# What the master tells systemd and the pidfile: over a real unix datagram socket bound as
# systemd binds NOTIFY_SOCKET, and a real pidfile.
class ClusterAnnouncerTest < Minitest::Test
  def setup
    @dir = Dir.mktmpdir("heron-announcer")
    @socket = Socket.new(:UNIX, :DGRAM)
    @socket.bind(Socket.sockaddr_un(File.join(@dir, "notify.sock")))
    @notifier = Heron::Systemd::Notifier.new({ "NOTIFY_SOCKET" => File.join(@dir, "notify.sock") })
    @pidfile = Heron::Launcher::Pidfile.new(File.join(@dir, "heron.pid"))
    logger = Heron::Log::Logger.new(Heron::Configuration.new(log_io: StringIO.new, error_io: StringIO.new))
    @announcer = Heron::Cluster::Announcer.new(Heron::Launcher::Readiness.new(@pidfile, @notifier, logger), @notifier)
  end

  def teardown
    @socket.close
    FileUtils.rm_rf(@dir)
  end

  def datagrams
    messages = []
    messages << @socket.recv(4096) while @socket.wait_readable(0.2)
    messages
  end

  def test_ready_is_told_once
    @announcer.booted
    assert_equal Process.pid, @announcer.pid
    @announcer.ready("1/1 workers serving")
    @announcer.ready("1/1 workers serving")
    assert @announcer.ready?
    assert_equal 1, datagrams.count { |message| message.include?("READY=1") }
    assert_equal Process.pid.to_s, File.read(File.join(@dir, "heron.pid")).strip
  end

  def test_after_a_handover_the_old_master_says_nothing_of_stopping
    @announcer.stopping
    assert_includes datagrams.join, "STOPPING=1"
    @announcer.handed_over
    @announcer.stopping
    assert_empty datagrams
  end

  def test_the_status_line_goes_out_on_the_first_tick_then_every_few_seconds
    @announcer.tick("2/2 workers serving")
    assert_includes datagrams.join, "STATUS=2/2 workers serving"
    @announcer.tick("2/2 workers serving")
    assert_empty datagrams
  end
end
