# frozen_string_literal: true

require "test_helper"
require "minitest/mock"

# The pacer runs a GC once `every` bytes have been handed out, and not before. Whether it asked
# for a collection is counted on GC.start itself: GC.count is process-wide, and in a full run
# other threads (servers of earlier tests, the EventMachine reactor) allocate and may collect
# between two readings, so "no collection yet" cannot be read from it.
class GCPacerTest < Minitest::Test
  def test_collects_once_every_n_bytes
    pacer = Heron::Request::GCPacer.new(1000)
    calls = []
    GC.stub(:start, ->(**options) { calls << options }) do
      pacer.handed_out(600)
      assert_empty calls, "not yet: 600 of 1000 bytes"
      pacer.handed_out(400)
      assert_equal [{ full_mark: false, immediate_sweep: true }], calls, "1000 bytes: one minor collection"
      pacer.handed_out(999)
      assert_equal 1, calls.size, "the count starts again after a collection"
      pacer.handed_out(1)
      assert_equal 2, calls.size, "and collects again at 1000"
    end
  end

  # The request really collects (Ruby may turn the minor collection into a major one: counted
  # with GC.count, which only ever grows).
  def test_the_collection_happens
    pacer = Heron::Request::GCPacer.new(1000)
    before = GC.count
    pacer.handed_out(1000)
    assert_operator GC.count, :>, before, "1000 bytes: one collection"
  end
end
