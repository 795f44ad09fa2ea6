# frozen_string_literal: true

require "test_helper"

# Server::SleepLanes: deadlines per duration in FIFO lanes, the earliest across lanes first, and a
# bounded number of lanes.
class SleepLanesTest < Minitest::Test
  def setup
    @lanes = Heron::Server::SleepLanes.new
  end

  def test_the_next_deadline_is_the_earliest_across_lanes
    @lanes.add(1.0, :a, 10.0)
    @lanes.add(0.5, :b, 10.2)
    @lanes.add(1.0, :c, 10.3)
    assert_in_delta 10.7, @lanes.next_due
  end

  def test_take_due_takes_only_the_fibers_past_their_deadline
    @lanes.add(1.0, :a, 10.0)
    @lanes.add(1.0, :b, 10.5)
    @lanes.add(0.2, :c, 10.5)
    assert_equal %i[a c], @lanes.take_due(11.0).sort
    assert_in_delta 11.5, @lanes.next_due
    assert_equal [:b], @lanes.take_due(11.5)
    assert_nil @lanes.next_due
  end

  def test_a_cancelled_entry_is_neither_due_nor_woken
    entry = @lanes.add(1.0, :a, 10.0)
    @lanes.add(1.0, :b, 10.5)
    @lanes.cancel(entry)
    assert_in_delta 11.5, @lanes.next_due
    assert_equal [:b], @lanes.take_due(12.0)
  end

  def test_past_max_lanes_add_declines_until_a_lane_empties
    max = Heron::Server::SleepLanes::MAX_LANES
    max.times { |i| @lanes.add(i + 1, :"f#{i}", 0.0) }
    assert_nil @lanes.add(max + 1, :late, 0.0), "a new duration past the limit"
    refute_nil @lanes.add(1, :same, 0.0), "a duration that has a lane already"
    @lanes.take_due(1.0)
    @lanes.next_due # drops the empty lane
    refute_nil @lanes.add(max + 1, :late, 0.0)
  end
end
