# frozen_string_literal: true

require "test_helper"

# Server::WakePipe: commands from other threads reach a loop waiting in the fiber scheduler, in
# the order sent; a stop once the loop is gone is a no-op.
class HeronServerWakePipeTest < Minitest::Test
  def setup
    @pipe = Heron::Server::WakePipe.new
  end

  def teardown
    @pipe.close
  rescue IOError
    nil
  end

  def test_a_stop_from_another_thread_wakes_the_waiting_loop
    received = Sync do |task|
      waiting = task.async { @pipe.next_command }
      Thread.new { @pipe.stop(graceful: false) }.join
      waiting.wait
    end
    assert_equal :immediate, received
  end

  def test_commands_arrive_in_the_order_they_were_sent
    @pipe.stop
    @pipe.drained
    @pipe.stop(graceful: false)
    assert_equal %i[graceful drained immediate], Sync { Array.new(3) { @pipe.next_command } }
  end

  def test_a_stop_after_the_loop_closed_the_pipe_does_nothing
    @pipe.close
    assert_nil @pipe.stop
    assert_nil @pipe.drained
  end
end
