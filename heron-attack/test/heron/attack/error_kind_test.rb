# frozen_string_literal: true

require "test_helper"
require "heron/attack"

class ErrorKindTest < Minitest::Test
  def test_kinds
    kind = ->(error) { Heron::Attack::ErrorKind.of(error) }
    assert_equal "timeout", kind.call(Async::TimeoutError.new)
    assert_equal "timeout", kind.call(Errno::ETIMEDOUT.new)
    assert_equal "refused", kind.call(Errno::ECONNREFUSED.new)
    [Errno::ECONNRESET.new, Errno::EPIPE.new, EOFError.new].each { |e| assert_equal "reset", kind.call(e) }
    assert_equal "other", kind.call(Heron::Attack::ProtocolError.new("x"))
    assert_equal "other", kind.call(SocketError.new("x"))
  end
end
