# frozen_string_literal: true

require "test_helper"

# The master's signal queue: a real signal sent to this process wakes the self-pipe and is
# handed out in order, outside the trap.
class ClusterSignalsTest < Minitest::Test
  def test_a_trapped_signal_is_queued_and_wakes_the_reader
    previous = Signal.trap("USR2", "SYSTEM_DEFAULT")
    signals = Heron::Cluster::Signals.new
    signals.trap(%w[USR2])
    Process.kill("USR2", Process.pid)
    assert signals.reader.wait_readable(ProcessHelper::PATIENCE), "the self-pipe was not written"
    signals.drain
    assert_equal "USR2", signals.shift
    assert_nil signals.shift
    refute signals.reader.wait_readable(0), "drain left bytes in the pipe"
  ensure
    Signal.trap("USR2", previous || "DEFAULT")
    signals&.ios&.each(&:close)
  end

  def test_pushed_signals_come_out_in_order
    signals = Heron::Cluster::Signals.new
    %w[TERM HUP TTIN].each { |name| signals.push(name) }
    assert_equal %w[TERM HUP TTIN], Array.new(3) { signals.shift }
    assert_equal 2, signals.ios.size
  ensure
    signals&.ios&.each(&:close)
  end
end
