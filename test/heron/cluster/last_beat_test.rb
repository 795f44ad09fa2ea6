# frozen_string_literal: true

require "test_helper"

# The master's record of a worker's heartbeats.
class ClusterLastBeatTest < Minitest::Test
  def test_the_first_beat_is_told_apart_and_each_beat_replaces_the_last
    beat = Heron::Cluster::LastBeat.new
    refute beat.heard?
    assert_equal [0, 0, 0], [beat.connections, beat.parked, beat.served]
    assert beat.record(3, 1, 10)
    first_at = beat.at
    refute beat.record(5, 2, 12)
    assert beat.heard?
    assert_equal [5, 2, 12], [beat.connections, beat.parked, beat.served]
    assert_operator beat.at, :>=, first_at
  end
end
