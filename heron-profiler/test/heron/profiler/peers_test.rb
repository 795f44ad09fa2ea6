# frozen_string_literal: true

require "test_helper"
require "heron/profiler"
require "heron/profiler/peers"

class ProfilerPeersTest < Minitest::Test
  def setup
    @root = Dir.mktmpdir("heron-peers-test")
  end

  def teardown
    @listener&.stop
    FileUtils.rm_rf(@root)
  end

  def test_a_shared_directory_others_can_write_to_is_refused
    peers = Heron::Profiler::Peers.new(12_345, root: @root)
    Dir.mkdir(peers.path, 0o777)
    File.chmod(0o777, peers.path)
    error = assert_raises(Errno::EACCES) { peers.serve(Heron::Profiler::Store.new) }
    assert_match(/not a private directory/, error.message)
  end

  def test_finds_a_record_in_the_worker_its_id_names
    store = Heron::Profiler::Store.new
    store.push(record("#{Process.pid.to_s(36)}-7", started_at: 1.0))
    @listener = Heron::Profiler::Peers.new(1, root: @root).serve(store)
    asking = Heron::Profiler::Peers.new(1, root: @root)
    # The listener is this process: pretend to be another one by asking through its socket.
    assert_nil asking.find("#{Process.pid.to_s(36)}-7"), "a worker never asks itself"
    answer = Heron::Profiler::Peers::Listener.new("unused", store).answer("find #{Process.pid.to_s(36)}-7\n")
    assert_equal "/p", JSON.parse(answer)["path"]
  end

  def test_recent_from_another_process_leaves_out_queries_and_skips_dead_peers
    store = Heron::Profiler::Store.new
    store.push(record("a-1", started_at: 2.0, queries: [{ sql: "SELECT 1" }]))
    peers = Heron::Profiler::Peers.new(2, root: @root)
    reader, writer = IO.pipe
    child = fork do
      reader.close
      peers.serve(store)
      writer.puts "ready"
      sleep
    end
    writer.close
    assert_equal "ready\n", reader.gets
    File.write(File.join(peers.path, "999999999.sock"), "") # a stale file, not a socket
    UNIXServer.new(File.join(peers.path, "999999998.sock")).close # a socket nobody listens on
    recent = peers.recent(10)
    assert_equal [["a-1", nil]], recent.map { |r| [r["id"], r["queries"]] }
  ensure
    if child
      Process.kill("KILL", child)
      Process.wait(child)
    end
  end

  def test_bad_questions_get_null
    listener = Heron::Profiler::Peers::Listener.new("unused", Heron::Profiler::Store.new)
    assert_equal "null", listener.answer("drop everything\n")
    assert_equal "null", listener.answer(nil)
    assert_equal "null", listener.answer("find nope\n")
    assert_equal "[]", listener.answer("recent -5\n")
  end

  private

  def record(id, **fields)
    { id: id, method: "GET", path: "/p", status: 200, **fields }
  end
end
