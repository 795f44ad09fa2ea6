# frozen_string_literal: true

require "heron/attack"

# A canned run for the report tests: 100 requests at 50/s, latencies 10..109 ms, two errors.
module ReportFixture
  # @return [Heron::Attack::Recorder]
  def fixture_recorder
    recorder = Heron::Attack::Recorder.new(0.0)
    100.times do |i|
      due = i / 50.0
      recorder.sent!(due, due + 0.0002, 3)
      recorder.response!(due, due + 0.0002, due + 0.010 + (i / 1000.0), i == 7 ? 503 : 200, 5)
    end
    2.times { recorder.error!(1.0, 1.2, Async::TimeoutError.new("execution expired")) }
    recorder.cost.cpu = 0.25
    recorder.cost.gc_count = 3
    recorder.cost.gc_ms = 12
    recorder
  end

  # @return [Heron::Attack::Options]
  def fixture_options(*extra)
    Heron::Attack::Options.parse(["http://127.0.0.1:1/x", "--rate", "50", "-n", "100", *extra])
  end

  # @return [Hash] a Summary#to_h of the canned run.
  def fixture_report(*extra)
    Heron::Attack::Summary.new(fixture_recorder, fixture_options(*extra), started_at: Time.utc(2026, 1, 2, 3, 4, 5)).to_h
  end
end
