# frozen_string_literal: true

require "test_helper"

# The one-at-a-time replacement queue: workers by index, retiring ones left out, and whether
# the round was a phased restart.
class ClusterRolloutTest < Minitest::Test
  def worker(index, retiring: false)
    Heron::Cluster::Worker.new(index, nil, nil, [], nil).tap { |w| w.retiring = retiring }
  end

  def test_queues_workers_by_index_without_the_retiring_ones
    rollout = Heron::Cluster::Rollout.new
    assert rollout.idle?
    rollout.start([worker(2), worker(0), worker(1, retiring: true)], phased: true)
    refute rollout.idle?
    assert_equal [0, 2], Array.new(2) { rollout.shift.index }
    assert_nil rollout.shift
    assert rollout.idle?
  end

  def test_each_round_ends_once_and_says_which_it_was
    rollout = Heron::Cluster::Rollout.new
    rollout.start([worker(0)], phased: true)
    assert_equal "phased restart", rollout.reason
    refute rollout.reforking?
    assert_equal :phased, rollout.finish
    assert_nil rollout.finish
    rollout.start([]) # a one-worker cluster's refork: nothing to replace but the mold's place
    assert rollout.reforking?
    assert_equal "refork", rollout.reason
    assert_equal :refork, rollout.finish
    refute rollout.reforking?
  end

  def test_a_refork_during_a_phased_restart_stays_part_of_it
    rollout = Heron::Cluster::Rollout.new
    rollout.start([worker(0)], phased: true)
    rollout.start([worker(1)])
    assert_equal :phased, rollout.finish
  end
end
