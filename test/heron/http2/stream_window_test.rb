# frozen_string_literal: true

require "test_helper"

# A stream's send window is made on first use (Heron::HTTP2::Stream#remote_window: a whole
# response leaves with its bytes counted, and no Window is made per request). That holds only
# while protocol-http2 reads a stream's @remote_window nowhere but in methods Heron's Stream
# overrides to make it first: this reads protocol-http2's own source to check, so an upgrade
# that reads it elsewhere fails here (and Stream::LAZY_SEND_WINDOW names the release checked).
class HeronHTTP2StreamWindowTest < Minitest::Test
  SOURCES = %w[stream.rb flow_controlled.rb].freeze

  def test_protocol_http2_reads_a_streams_send_window_only_where_heron_makes_it_first
    skip "protocol-http2 #{Protocol::HTTP2::VERSION}: the window is made with the stream" unless Heron::HTTP2::Stream::LAZY_SEND_WINDOW
    readers = SOURCES.flat_map { |file| methods_reading_send_window(File.join(protocol_http2_dir, file)) }.uniq
    refute_empty readers, "protocol-http2's source was not read"
    assert_empty readers - [:initialize] - Heron::HTTP2::Stream::SEND_WINDOW_READERS,
                 "protocol-http2 methods reading @remote_window that Heron::HTTP2::Stream does not make it first in"
    (Heron::HTTP2::Stream::SEND_WINDOW_READERS + [:remote_window]).each do |name|
      assert_equal Heron::HTTP2::Stream, Heron::HTTP2::Stream.instance_method(name).owner, "#{name} is Heron's"
    end
  end

  private

  def protocol_http2_dir = File.dirname(Protocol::HTTP2::Stream.instance_method(:send_data).source_location.first)

  # The names of the methods whose bodies mention @remote_window (the `attr` reader aside).
  def methods_reading_send_window(path)
    method = nil
    File.foreach(path).filter_map do |line|
      method = Regexp.last_match(1).to_sym if line =~ /^\s*def\s+(?:self\.)?(\w+[?!=]?)/
      method if line.include?("@remote_window") && !line.match?(/^\s*#/)
    end
  end
end
