# frozen_string_literal: true

require "test_helper"

# The pacer runs a minor GC once `every` bytes have been handed out, and not before.
class GCPacerTest < Minitest::Test
  def test_collects_once_every_n_bytes
    pacer = Heron::Request::GCPacer.new(1000)
    before = GC.stat(:minor_gc_count)
    pacer.handed_out(600)
    assert_equal before, GC.stat(:minor_gc_count), "not yet: 600 of 1000 bytes"
    pacer.handed_out(400)
    after = GC.stat(:minor_gc_count)
    assert_operator after, :>, before, "1000 bytes: one minor collection"
    pacer.handed_out(999)
    assert_equal after, GC.stat(:minor_gc_count), "the count starts again after a collection"
  end
end
