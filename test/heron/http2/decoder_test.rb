# frozen_string_literal: true

require "test_helper"
require "protocol/hpack"
require "heron/http2/decoder"

# HPACK decoding with Huffman-coded strings remembered across connections: each connection's
# decode gives what protocol-hpack's own gives, as strings the app may change.
class HeronHTTP2DecoderTest < Minitest::Test
  FIELDS = [[":method", "GET"], [":path", "/search?q=heron"], [":scheme", "https"], [":authority", "example.com"],
            ["user-agent", "Mozilla/5.0 (X11; Linux x86_64) Heron test"], ["cookie", "a=#{'x' * 300}"]].freeze

  def block(fields)
    String.new(encoding: Encoding::BINARY).tap { |out| Protocol::HPACK::Compressor.new(out, Protocol::HPACK::Context.new).encode(fields) }
  end

  def test_each_new_connection_decodes_the_same_block_as_protocol_hpack_does
    data = block(FIELDS)
    expected = Protocol::HPACK::Decompressor.new(data.dup, Protocol::HPACK::Context.new).decode
    decodes = Array.new(3) { Heron::HTTP2::Decoder.new(data.dup, Protocol::HPACK::Context.new).decode }
    decodes.each { |fields| assert_equal expected, fields }
    assert(decodes.flatten.all? { |string| string.encoding == Encoding::UTF_8 })
    # a remembered string is never the one handed out: connections do not share their values
    decodes.first.zip(decodes.last).each { |(name, first), (_, last)| refute_same first, last, name unless %w[:method :scheme].include?(name) } # those two: static table
  end

  def test_a_bad_huffman_string_is_still_refused
    data = "\x00\x81\x80\x81\xff".b # a literal name "\x80" (raw), a Huffman value of one 0xff byte (an EOS prefix)
    assert_raises(Protocol::HPACK::Error) { Heron::HTTP2::Decoder.new(data, Protocol::HPACK::Context.new).decode }
  end
end
