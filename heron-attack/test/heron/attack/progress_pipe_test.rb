# frozen_string_literal: true

require "test_helper"
require_relative "support/report_fixture"

class ProgressPipeTest < Minitest::Test
  include ReportFixture

  def test_writes_snapshots_and_closes
    reader, writer = IO.pipe
    pipe = Heron::Attack::ProgressPipe.new(writer)
    pipe.update(fixture_recorder, 2.5)
    pipe.finish
    sent, finished, errors, p99, elapsed = reader.read.split.map(&:to_i)
    assert_equal [100, 102, 2, 2_500_000], [sent, finished, errors, elapsed]
    assert_operator p99, :>, 100_000
  ensure
    reader&.close
  end

  def test_a_closed_pipe_is_ignored
    reader, writer = IO.pipe
    reader.close
    assert_nil Heron::Attack::ProgressPipe.new(writer).update(fixture_recorder, 0.0)
  ensure
    writer&.close
  end
end
