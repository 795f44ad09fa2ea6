# frozen_string_literal: true

require "test_helper"

# The pacer runs a GC once `every` bytes have been handed out, and not before. Counted with
# GC.count: Ruby may turn the requested minor collection into a major one.
class GCPacerTest < Minitest::Test
  def test_collects_once_every_n_bytes
    pacer = Heron::Request::GCPacer.new(1000)
    before = GC.count
    pacer.handed_out(600)
    assert_equal before, GC.count, "not yet: 600 of 1000 bytes"
    pacer.handed_out(400)
    after = GC.count
    assert_operator after, :>, before, "1000 bytes: one collection"
    pacer.handed_out(999)
    assert_equal after, GC.count, "the count starts again after a collection"
  end
end
