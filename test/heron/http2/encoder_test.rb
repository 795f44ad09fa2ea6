# frozen_string_literal: true

require "test_helper"
require "protocol/hpack"
require "heron/http2/encoder"

# HPACK encoding of response headers: every block decodes, with protocol-hpack's decoder keeping
# its table across the connection's blocks, to the fields given, through table growth,
# eviction, a table size change, and values that are not ASCII.
class HeronHTTP2EncoderTest < Minitest::Test
  def setup
    @encoder = Heron::HTTP2::Encoder.new
    @decoder = Protocol::HPACK::Context.new
  end

  def round_trip(fields, table_size = nil)
    block = @encoder.encode(fields, String.new(encoding: Encoding::BINARY), table_size)
    decoded = Protocol::HPACK::Decompressor.new(block.dup, @decoder, table_size_limit: 4096).decode
    assert_equal fields.map { |field| field.map(&:b) }, decoded.map { |field| field.map(&:b) } # the decoder tags UTF-8
    block
  end

  def response(n) = [[":status", "200"], ["date", "Thu, 26 Nov 2026 17:00:#{format('%02d', n % 60)} GMT"],
                     ["content-type", "text/plain"], ["content-length", (n * 7).to_s], ["x-request-id", "req-#{n}"],
                     ["x-custom-#{n % 5}", "v" * (n % 40)]]

  def test_blocks_decode_to_the_fields_across_a_connection_with_eviction
    first = round_trip(response(1))
    again = round_trip(response(1).reject { |name, _| name == "x-request-id" })
    assert_operator again.bytesize, :<=, 5, "a repeated response is indexed fields, a byte each"
    assert_operator first.bytesize, :>, again.bytesize
    300.times { |n| round_trip(response(n)) } # a new date per block: entries are evicted
  end

  def test_unique_fields_stay_out_of_the_table
    round_trip([["x-request-id", "a"]])
    second = round_trip([["x-request-id", "a"]])
    assert_equal 0x00, second.getbyte(0) & 0xf0, "literal without indexing"
    assert_equal 0, @decoder.table.size
  end

  def test_a_table_size_change_is_announced_and_honoured
    round_trip(response(1))
    block = round_trip(response(2), 64)
    assert_equal 0x20, block.getbyte(0) & 0xe0, "a dynamic table size update first"
    assert_operator @decoder.table.sum { |name, value| name.bytesize + value.bytesize + 32 }, :<=, 64
    20.times { |n| round_trip(response(n), 64) }
    round_trip([["x-big", "y" * 100]], 0) # nothing fits: a literal, no entry
    round_trip(response(3), 4096)
  end

  def test_long_and_non_ascii_values
    round_trip([["location", "/caf\u00e9".b], ["x-long", "z" * 5000], ["x-#{'n' * 200}", "1"]])
  end

  def test_a_value_changed_by_the_caller_after_encoding_does_not_corrupt_the_table
    value = +"text/html"
    round_trip([["content-type", value]])
    value << "; charset=utf-8"
    round_trip([["content-type", "text/html"], ["content-type", value]])
    200.times { |n| round_trip(response(n)) }
  end
end
