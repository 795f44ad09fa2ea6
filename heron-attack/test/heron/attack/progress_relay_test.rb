# frozen_string_literal: true

require "test_helper"
require "stringio"
require "heron/attack"

class ProgressRelayTest < Minitest::Test
  # Records what it is asked to draw.
  class FakeProgress
    attr_reader :shown, :finished

    def initialize = @shown = []
    def show(snapshot, rate) = @shown << [snapshot, rate]
    def finish = @finished = true
  end

  def test_sums_processes_and_takes_the_worst_p99
    pipes = Array.new(2) { IO.pipe }
    progress = FakeProgress.new
    relay = Heron::Attack::ProgressRelay.new(progress, pipes.map(&:first)).start
    pipes[0][1].puts("10 8 1 5000 1000000")
    pipes[1][1].puts("12 12 0 9000 2000000")
    pipes.each { |_, writer| writer.close }
    relay.finish
    assert progress.finished
    assert_equal [22, 20, 1, 9000], progress.shown.last.first
    assert_in_delta 16.0, progress.shown.last.last # 10/s + 6/s
  end
end
