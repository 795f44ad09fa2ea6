# frozen_string_literal: true

require "test_helper"

# The worker → master pipe: heartbeats from real forked processes, and garbage that is dropped.
class ChannelTest < Minitest::Test
  def test_heartbeats_from_forked_processes_arrive_whole
    channel = Heron::Cluster::Channel.new
    pids = 3.times.map { fork { 50.times { |i| channel.beat(i, i / 2) }; exit!(0) } }
    pids.each { |pid| Process.wait(pid) }
    beats = []
    beats.concat(channel.read) while channel.reader.wait_readable(0.2) && beats.size < 150
    assert_equal 150, beats.size
    assert_equal pids.sort, beats.map(&:first).uniq.sort
    assert_equal (0...50).map { |i| [i, i / 2, 0] }, beats.select { |pid, _| pid == pids.first }.map { |beat| beat.drop(1) }
  ensure
    channel&.close
  end

  def test_malformed_lines_are_ignored_and_a_long_partial_line_is_bounded
    channel = Heron::Cluster::Channel.new
    writer = channel.instance_variable_get(:@writer)
    writer.write("nonsense\nbeat x 1\nbeat 12 3 1\nbeat 13 4 x\n#{'z' * 10_000}")
    assert_equal [[12, 3, 1, 0]], channel.read
    assert_operator channel.instance_variable_get(:@buffer).bytesize, :<=, 256
  ensure
    channel&.close
  end

  def test_mold_notes_are_kept_apart_from_beats
    channel = Heron::Cluster::Channel.new
    pid = fork do
      channel.note("mold", Process.pid)
      channel.beat(2, 1, 40)
      channel.note("adopt", 3, 4321)
      exit!(0)
    end
    Process.wait(pid)
    assert_equal [[pid, 2, 1, 40]], channel.read
    assert_equal [["mold", pid], ["adopt", 3, 4321]], channel.notes
    assert_empty channel.notes
  ensure
    channel&.close
  end
end
