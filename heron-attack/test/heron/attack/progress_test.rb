# frozen_string_literal: true

require "test_helper"
require "stringio"
require_relative "support/report_fixture"

class ProgressTest < Minitest::Test
  include ReportFixture

  # A StringIO that says it is a terminal.
  class FakeTTY < StringIO
    def tty? = true
  end

  def test_silent_unless_a_tty
    assert_nil Heron::Attack::Progress.for(StringIO.new, total: 10)
    assert_nil Heron::Attack::Progress.for(Object.new, total: 10)
    assert_instance_of Heron::Attack::Progress, Heron::Attack::Progress.for(FakeTTY.new, total: 10)
  end

  def test_draws_and_clears_one_line
    io = FakeTTY.new
    progress = Heron::Attack::Progress.for(io, total: 100)
    progress.update(fixture_recorder, 2.0)
    progress.finish
    assert_match %r{\A\r\e\[Ksent 100/100  rate 50\.0/s  p99 \d+\.\dms  errors 2  in flight -2\r\e\[K\z}, io.string
  end
end
