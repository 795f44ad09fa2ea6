# frozen_string_literal: true

require "test_helper"
require "heron/server/doorbell"

# Server::Doorbell under the real fiber scheduler: a ring wakes the waiting fiber at the loop's
# next turn without switching to it, a ring with nobody waiting does nothing, and rings before
# the waiter runs wake it once.
class DoorbellTest < Minitest::Test
  def test_a_ring_wakes_the_waiter_at_the_next_turn_without_switching_to_it
    events = Sync do
      bell = Heron::Server::Doorbell.new
      log = []
      waiter = Async do
        bell.wait
        log << :woken
      end
      bell.ring
      log << :rang # the ringer goes on first
      waiter.wait
      log
    end
    assert_equal %i[rang woken], events
  end

  def test_a_ring_with_nobody_waiting_is_not_kept_for_a_later_wait
    woken = Sync do |task|
      bell = Heron::Server::Doorbell.new
      bell.ring
      waiter = Async { bell.wait }
      3.times { task.yield }
      done = waiter.finished?
      bell.ring
      waiter.wait
      done
    end
    refute woken, "a ring before the wait must not end it"
  end

  def test_rings_before_the_waiter_runs_wake_it_once
    count = Sync do |task|
      bell = Heron::Server::Doorbell.new
      turns = 0
      waiter = Async do
        2.times do
          bell.wait
          turns += 1
        end
      end
      3.times { bell.ring }
      3.times { task.yield }
      waiter.stop
      turns
    end
    assert_equal 1, count
  end
end
