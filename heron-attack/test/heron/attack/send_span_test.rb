# frozen_string_literal: true

require "test_helper"
require "heron/attack"
require "heron/attack/send_span"

class SendSpanTest < Minitest::Test
  SendSpan = Heron::Attack::SendSpan

  def test_keeps_the_first_and_last_send_and_the_last_finish_in_any_order
    span = SendSpan.new
    assert_nil span.first_sent
    [3.0, 1.0, 2.0].each { |time| span.sent(time) }
    [4.0, 6.0, 5.0].each { |time| span.done(time) }
    assert_equal [1.0, 3.0, 6.0], [span.first_sent, span.last_sent, span.last_done]
  end

  def test_merge_covers_both_and_an_empty_one_changes_nothing
    a = SendSpan.new
    b = SendSpan.new
    a.sent(2.0)
    a.done(3.0)
    b.sent(1.0)
    b.sent(4.0)
    b.done(5.0)
    a.merge!(b).merge!(SendSpan.new)
    assert_equal [1.0, 4.0, 5.0], [a.first_sent, a.last_sent, a.last_done]
  end
end
