# frozen_string_literal: true

require "test_helper"
require "heron/attack"
require "heron/attack/deadlines"

class DeadlinesTest < Minitest::Test
  Deadlines = Heron::Attack::Deadlines

  def test_a_block_past_its_deadline_gets_a_timeout_and_others_run_on
    deadlines = Deadlines.new(1)
    results = Sync do |task|
      slow = task.async do
        deadlines.within { sleep(5) }
      rescue Async::TimeoutError => e
        e.class
      end
      quick = task.async { deadlines.within { sleep(0.05) } && :done }
      [slow.wait, quick.wait].tap { deadlines.stop }
    end
    assert_equal [Async::TimeoutError, :done], results
  end

  def test_a_finished_block_is_never_interrupted_later
    deadlines = Deadlines.new(0.1)
    Sync do
      assert_equal :value, deadlines.within { :value }
      sleep(0.3) # two deadlines' worth: the finished entry is dropped, nothing is raised here
      assert_raises(Async::TimeoutError) { deadlines.within { sleep(1) } }
      deadlines.stop
    end
  end
end
