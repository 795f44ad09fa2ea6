# frozen_string_literal: true

require "test_helper"
require "protocol/hpack"
require "heron/http2/encoder"

# The HPACK encoder's bounds: its dynamic table stays within 4096 bytes whatever larger size
# the client allows (the protocol's first size, so nothing needs announcing),
# and a block with a field that is not a pair of Strings is refused before anything is
# written or added to the table (a half-written block would leave the client's table out of
# step with ours).
class HeronHTTP2EncoderBoundsTest < Minitest::Test
  def test_the_table_stays_within_4096_bytes_when_the_client_allows_more
    encoder = Heron::HTTP2::Encoder.new
    decoder = Protocol::HPACK::Context.new
    allowed = 1 << 20
    100.times do |n|
      fields = [[":status", "200"], ["x-field-#{n}", "v" * 100]]
      block = encoder.encode(fields, String.new(encoding: Encoding::BINARY), allowed)
      decoded = Protocol::HPACK::Decompressor.new(block, decoder, table_size_limit: allowed).decode
      assert_equal fields, decoded
    end
    assert_operator decoder.table.sum { |name, value| name.bytesize + value.bytesize + 32 }, :<=, 4096
  end

  def test_a_field_that_is_not_a_pair_of_strings_is_refused_before_anything_is_written
    encoder = Heron::HTTP2::Encoder.new
    buffer = String.new(encoding: Encoding::BINARY)
    [[["x-a", "1"], ["x-b", 2]], [["x-a", "1"], ["x-b"]], [["x-a", "1"], "x-b: 2"]].each do |fields|
      assert_raises(ArgumentError, fields.inspect) { encoder.encode(fields, buffer) }
      assert_empty buffer, fields.inspect
    end
    decoder = Protocol::HPACK::Context.new
    block = encoder.encode([["x-a", "1"]], String.new(encoding: Encoding::BINARY))
    assert_equal [["x-a", "1"]], Protocol::HPACK::Decompressor.new(block, decoder).decode
    assert_equal 1, decoder.table.size, "x-a was not in the table yet: a literal, now added"
  end
end
