# frozen_string_literal: true

require "test_helper"

# The master's set of live workers: counts, status line and control stats from real heartbeats,
# resizing, and the memory check reading this process's real resident size.
class ClusterRosterTest < Minitest::Test
  def worker(index, pid)
    Heron::Cluster::Worker.new(index, nil, nil, [], nil).tap { |w| w.adopted(pid) }
  end

  def test_status_and_stats_follow_the_heartbeats
    roster = Heron::Cluster::Roster.new(2, nil)
    first = roster.add(worker(0, 101))
    roster.add(worker(1, 102))
    refute roster.all_serving?
    first.beat(3, 1, 40)
    assert_equal "1/2 workers serving, 3 connections", roster.status
    roster[102].beat(2, 0, 7)
    assert roster.all_serving?
    assert_equal({ workers: 2, worker_pids: [101, 102], restarts: 0, parked_connections: 1,
                   requests_by_worker: { 101 => 40, 102 => 7 } }, roster.stats)
    assert_same first, roster.busiest
  end

  def test_delete_restart_and_resize
    roster = Heron::Cluster::Roster.new(1, nil)
    gone = roster.add(worker(0, 101))
    assert roster.live?(gone)
    assert_same gone, roster.delete(101)
    refute roster.live?(gone)
    assert roster.empty?
    roster.restarted(crashed: true)
    assert_equal 1, roster.restarts
    assert_nil roster.resize(-1), "the last worker stays"
    assert_equal 2, roster.resize(1)
    assert_equal 2, roster.wanted
  end

  def test_a_replacement_under_way
    roster = Heron::Cluster::Roster.new(1, nil)
    old = roster.add(worker(0, 101))
    refute roster.replacing?
    old.retiring = true
    assert roster.replacing?
  end

  def test_over_memory_reads_the_real_resident_size_at_most_every_few_seconds
    roster = Heron::Cluster::Roster.new(1, nil)
    me = roster.add(worker(0, Process.pid))
    me.beat(0)
    assert_nil roster.over_memory(1 << 50)
    assert_nil roster.over_memory(1), "checked again at once"
    fresh = Heron::Cluster::Roster.new(1, nil)
    fresh.add(me)
    found, bytes = fresh.over_memory(1)
    assert_same me, found
    assert_operator bytes, :>, 1_000_000
  end
end
