# frozen_string_literal: true

require "test_helper"

# The master's SIGHUP reaches every worker, including one that was still booting (it ignores
# HUP until its handlers are installed, before its first heartbeat): that one gets it at its
# first heartbeat.
class WorkerHangupTest < Minitest::Test
  def worker
    worker = Heron::Cluster::Worker.new(0, Heron::Configuration.new, nil, [], nil)
    sent = []
    worker.define_singleton_method(:signal) { |signal| sent << signal }
    [worker, sent]
  end

  def test_a_serving_worker_gets_hup_at_once
    worker, sent = worker()
    worker.beat(0)
    worker.hangup
    assert_equal ["HUP"], sent
  end

  def test_a_booting_worker_gets_hup_at_its_first_heartbeat_and_once
    worker, sent = worker()
    worker.hangup
    assert_empty sent, "not while it ignores HUP"
    worker.beat(0)
    assert_equal ["HUP"], sent, "at the first heartbeat"
    worker.beat(0)
    assert_equal ["HUP"], sent, "not again"
  end
end
