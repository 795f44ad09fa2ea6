# frozen_string_literal: true

require "test_helper"
require "heron/profiler"

class ProfiledBodyTest < Minitest::Test
  # Stands in for the middleware: records what it was told.
  class Finisher
    attr_reader :finished

    def finish(profile, status)
      (@finished ||= []) << [profile, status]
    end
  end

  # A body that answers only each and close, and counts closes.
  class EachBody
    attr_reader :closes

    def initialize = @closes = 0
    def each = yield("part")
    def close = @closes += 1
  end

  def setup
    @finisher = Finisher.new
    @profile = Heron::Profiler::RequestProfile.new("GET", "/", "")
  end

  def wrap(body)
    Heron::Profiler::ProfiledBody.new(body, @finisher, @profile, 200)
  end

  def test_forwards_only_what_the_body_answers
    body = wrap(EachBody.new)
    assert body.respond_to?(:each)
    refute body.respond_to?(:to_ary)
    refute body.respond_to?(:call)
    refute body.respond_to?(:to_path)
    assert body.respond_to?(:close)
    parts = []
    body.each { |part| parts << part }
    assert_equal ["part"], parts
  end

  def test_close_closes_the_body_once_and_finishes_the_profile
    inner = EachBody.new
    body = wrap(inner)
    refute body.closed?
    2.times { body.close }
    assert body.closed?
    assert_equal 1, inner.closes
    assert_equal [[@profile, 200]], @finisher.finished
  end

  def test_the_profile_is_finished_even_when_close_raises
    inner = Object.new
    def inner.each = nil
    def inner.close = raise(IOError, "gone")
    assert_raises(IOError) { wrap(inner).close }
    assert_equal 1, @finisher.finished.size
  end

  def test_to_ary_closes_as_the_rack_spec_asks
    body = wrap(%w[a b])
    assert body.respond_to?(:to_ary)
    assert_equal %w[a b], body.to_ary
    assert body.closed?
    assert_equal 1, @finisher.finished.size
  end

  def test_streaming_and_file_bodies
    streamed = []
    streaming = wrap(->(stream) { stream << "x" })
    assert streaming.respond_to?(:call)
    refute streaming.respond_to?(:each)
    streaming.call(streamed)
    assert_equal ["x"], streamed
    file = Struct.new(:to_path) { def each = nil }.new("/tmp/f")
    assert_equal "/tmp/f", wrap(file).to_path
  end
end
