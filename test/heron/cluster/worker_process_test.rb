# frozen_string_literal: true

require "test_helper"
require "net/http"

# A worker's life inside its forked process, without a master: a real fork serves real HTTP on
# the listener it was given, beats on the channel, and drains and exits when the master-alive
# pipe closes (as when the master dies).
class ClusterWorkerProcessTest < Minitest::Test
  def test_serves_beats_and_exits_when_the_master_is_gone
    listener = TCPServer.new("127.0.0.1", 0)
    alive_reader, alive_writer = IO.pipe
    channel = Heron::Cluster::Channel.new
    config = Heron::Configuration.new(log_io: StringIO.new, error_io: StringIO.new, worker_timeout: 30)
    logger = Heron::Log::Logger.new(config)
    app = ->(_env) { [200, { "content-type" => "text/plain" }, ["worker #{Process.pid}"]] }
    process = Heron::Cluster::WorkerProcess.new(0, config, logger, [listener], app)
    pid = fork do
      alive_writer.close
      process.run_forked(Process.ppid, alive_reader, channel, nil)
    end
    alive_reader.close
    assert channel.reader.wait_readable(ProcessHelper::PATIENCE), "no heartbeat"
    assert_equal pid, channel.read.first&.first
    assert_equal "worker #{pid}", Net::HTTP.get(URI("http://127.0.0.1:#{listener.local_address.ip_port}/"))
    alive_writer.close
    _, status = Timeout.timeout(ProcessHelper::PATIENCE) { Process.wait2(pid) }
    pid = nil
    assert_equal 0, status.exitstatus
  ensure
    listener&.close
    stop(pid) if pid
  end

  def stop(pid)
    Process.kill("KILL", pid)
    Process.wait(pid)
  rescue SystemCallError
    nil
  end

  def test_a_sibling_has_its_own_index
    process = Heron::Cluster::WorkerProcess.new(0, nil, nil, [], nil)
    assert_equal 3, process.sibling(3, nil).index
  end
end
