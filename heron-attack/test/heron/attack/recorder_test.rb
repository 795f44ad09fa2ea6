# frozen_string_literal: true

require "test_helper"
require "heron/attack"

class RecorderTest < Minitest::Test
  Recorder = Heron::Attack::Recorder

  def sample_recorder(start, offset)
    recorder = Recorder.new(start)
    due = start + offset
    recorder.sent!(due, due + 0.001, 10)
    recorder.response!(due, due + 0.001, due + 0.101, 200, 5)
    recorder.sent!(due + 1, due + 1, 0)
    recorder.error!(due + 1, due + 1.5, Errno::ECONNREFUSED.new)
    recorder
  end

  def test_records_latency_lateness_statuses_and_errors
    recorder = sample_recorder(100.0, 0.0)
    assert_in_delta 101_000, recorder.corrected.max, 5
    assert_in_delta 100_000, recorder.uncorrected.max, 5
    assert_in_delta 1_000, recorder.lateness.max, 5
    assert_equal({ 200 => 1 }, recorder.statuses)
    assert_equal 1, recorder.errors["refused"]
    assert_equal [2, 1, 1, 5, 10], [recorder.sent, recorder.responses, recorder.error_count, recorder.bytes_in, recorder.bytes_out]
    assert_equal [0, 1], recorder.timeline.keys.sort
    assert_equal 1, recorder.timeline[1][1]
    assert_equal ["refused: Errno::ECONNREFUSED: Connection refused"], recorder.error_samples.keys
  end

  def test_error_samples_are_limited
    recorder = Recorder.new(0.0)
    8.times { |i| recorder.error!(0.0, 0.1, RuntimeError.new("boom #{i}")) }
    recorder.error!(0.0, 0.1, RuntimeError.new("boom 0"))
    assert_equal Recorder::SAMPLE_LIMIT, recorder.error_samples.size
    assert_equal 2, recorder.error_samples["other: RuntimeError: boom 0"]
  end

  def test_merge_adds_everything
    a = sample_recorder(100.0, 0.0)
    b = sample_recorder(100.0, 0.5)
    a.cost.cpu = 0.5
    b.cost.cpu = 0.25
    a.cost.gc_count, a.cost.gc_ms, b.cost.gc_count, b.cost.gc_ms = 2, 30, 3, 40
    a.merge!(b)
    assert_in_delta 0.75, a.cpu
    assert_equal [5, 70], [a.gc_count, a.gc_ms]
    assert_equal [4, 2, 2, { 200 => 2 }, 2], [a.sent, a.responses, a.error_count, a.statuses, a.corrected.count]
    assert_in_delta 100.001, a.first_sent
    assert_in_delta 101.5, a.last_sent
    assert_in_delta 102.0, a.last_done
    assert_equal 2, a.timeline[0][0].count
    assert_equal 2, a.timeline[1][1]
    assert_equal 2, a.error_samples.values.first
  end

  def test_merge_into_an_empty_recorder
    a = Recorder.new(0.0)
    a.merge!(sample_recorder(0.0, 2.0))
    assert_equal [2, 3], a.timeline.keys.sort
    assert_in_delta 2.001, a.first_sent
  end

  def test_sends_by_stage_merge_as_counts_and_the_latest_send
    a = Recorder.new(0.0)
    b = Recorder.new(0.0)
    a.sent!(0.0, 0.1, 0, 0)
    a.sent!(1.0, 1.4, 0, 2)
    b.sent!(0.5, 0.6, 0, 0)
    b.sent!(1.5, 1.3, 0, 2)
    a.merge!(b)
    assert_equal({ 0 => [2, 0.6], 2 => [2, 1.4] }, a.stage_sends)
  end

  def test_marshal_round_trip
    copy = Marshal.load(Marshal.dump(sample_recorder(1.0, 0.0))) # rubocop:disable Security/MarshalLoad
    assert_equal 2, copy.sent
    assert_equal 1, copy.corrected.count
  end

  def test_timeline_counts_failed_statuses_and_merges_them
    a = Heron::Attack::Recorder.new(0.0)
    b = Heron::Attack::Recorder.new(0.0)
    a.response!(0.1, 0.1, 0.2, 503, 0)
    a.response!(0.2, 0.2, 0.3, 200, 0)
    b.response!(0.3, 0.3, 0.4, 404, 0)
    assert_equal [2, 0, 1], [a.timeline[0][0].count, a.timeline[0][1], a.timeline[0][2]]
    a.merge!(b)
    assert_equal 2, a.timeline[0][2]
  end
end
