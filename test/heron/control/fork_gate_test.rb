# frozen_string_literal: true

require "test_helper"
require "async"
require "heron/control/fork_gate"

# Forks, each held by a ForkGate, while another thread keeps an Async reactor busy inside its
# task fibers (as a control listener under scrapes does): every child makes threads and
# collects garbage, and must exit cleanly. Forked between the reactor's turns without the gate,
# most such children die in GC (segmentation fault or `[BUG] try to mark T_NONE object`).
class ForkGateTest < Minitest::Test
  FORKS = 20

  def test_children_forked_through_the_gate_survive_their_garbage_collection
    gate = Heron::Control::ForkGate.new
    reactor = Thread::Queue.new
    busy = Thread.new { spin(gate, reactor) }
    wake = reactor.pop.then { |scheduler| -> { scheduler.interrupt } }
    statuses = Array.new(FORKS) { Process.wait2(gate.hold(wake) { fork { exit!(child) } }).last }
    assert_equal [0] * FORKS, statuses.map(&:exitstatus), statuses.map(&:inspect).uniq.join(", ")
  ensure
    busy&.kill&.join
  end

  private

  # A reactor whose tasks run Ruby code most of the time, one turn at a time through the gate.
  def spin(gate, queue)
    reactor = Async::Reactor.new
    gate.turn { reactor.async { |task| loop { task.async { churn(20_000) }.wait } } }
    queue << reactor
    nil while gate.turn { reactor.run_once(0.2) }
  ensure
    Fiber.set_scheduler(nil)
  end

  def churn(count)
    Array.new(count) { |i| "row #{i}" }.size
  end

  # In the child: new threads (on the dead thread's reused stack), then full collections.
  def child
    Array.new(4) { Thread.new { churn(2000) } }.each(&:join)
    3.times { GC.start }
    0
  end
end
