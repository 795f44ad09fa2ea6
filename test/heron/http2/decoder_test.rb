# frozen_string_literal: true

require "test_helper"
require "protocol/hpack"
require "heron/http2/decoder"

# HPACK decoding of request headers: every block, through a connection's dynamic table (growth,
# eviction, size updates, Huffman and raw strings), gives what protocol-hpack's decoder gives,
# Huffman-coded strings remembered across connections but never shared between them, and a
# malformed block is refused.
class HeronHTTP2DecoderTest < Minitest::Test
  FIELDS = [[":method", "GET"], [":path", "/search?q=heron"], [":scheme", "https"], [":authority", "example.com"],
            ["user-agent", "Mozilla/5.0 (X11; Linux x86_64) Heron test"], ["cookie", "a=#{'x' * 300}"]].freeze

  def block(fields, context = Protocol::HPACK::Context.new, table_size = nil)
    String.new(encoding: Encoding::BINARY).tap { |out| Protocol::HPACK::Compressor.new(out, context, table_size_limit: table_size).encode(fields) }
  end

  def test_each_new_connection_decodes_the_same_block_as_protocol_hpack_does
    data = block(FIELDS)
    expected = Protocol::HPACK::Decompressor.new(data.dup, Protocol::HPACK::Context.new).decode
    decodes = Array.new(3) { Heron::HTTP2::Decoder.new.decode(data.dup) }
    decodes.each { |fields| assert_equal expected, fields }
    assert(decodes.flatten.all? { |string| string.encoding == Encoding::UTF_8 })
    # a remembered string is never the one handed out: connections do not share their values
    decodes.first.zip(decodes.last).each { |(name, first), (_, last)| refute_same first, last, name unless %w[:method :scheme].include?(name) } # those two: static table
  end

  # A repeated block of indexed fields is decoded once; a block that changes the table between
  # two such blocks makes the next one decode afresh (its dynamic index now names another entry).
  def test_a_repeated_block_of_indexed_fields_is_decoded_once_until_the_table_changes
    decoder = Heron::HTTP2::Decoder.new
    client = Protocol::HPACK::Context.new
    decoder.decode(block([[":authority", "first.example"]], client)) # the table's entry 62
    repeated = [0x82, 0x84, 0xbe].pack("C*") # :method GET, :path /, entry 62
    first = decoder.decode(repeated.dup)
    assert_equal [[":method", "GET"], [":path", "/"], [":authority", "first.example"]], first
    assert_same first, decoder.decode(repeated.dup), "the same block again: the fields decoded last time"
    assert_predicate first, :frozen?
    decoder.decode(block([[":authority", "second.example"]], client)) # now entry 62; first.example 63
    assert_equal [[":method", "GET"], [":path", "/"], [":authority", "second.example"]], decoder.decode(repeated.dup)
  end

  # A caller that reuses its String for the next block (a read buffer) gets that block decoded,
  # not the remembered one it overwrote.
  def test_a_reused_string_is_not_taken_for_the_remembered_block
    decoder = Heron::HTTP2::Decoder.new
    buffer = [0x82, 0x84].pack("C*") # :method GET, :path /
    assert_equal [[":method", "GET"], [":path", "/"]], decoder.decode(buffer)
    buffer.replace([0x83, 0x85].pack("C*")) # :method POST, :path /index.html
    assert_equal [[":method", "POST"], [":path", "/index.html"]], decoder.decode(buffer)
  end

  def test_a_connection_of_blocks_decodes_as_protocol_hpack_does
    %i[shorter never].each do |huffman|
      client = Protocol::HPACK::Context.new(huffman: huffman)
      theirs = Protocol::HPACK::Context.new
      ours = Heron::HTTP2::Decoder.new
      300.times do |n|
        fields = [[":method", n.even? ? "GET" : "POST"], [":path", "/item/#{n % 37}"], [":scheme", "http"], [":authority", "example.com"],
                  ["x-trace-#{n % 11}", "t" * (n % 90)], ["cookie", "session=#{n % 7}"]]
        size = { 100 => 256, 200 => 4096 }[n]
        data = block(fields, client, size)
        expected = Protocol::HPACK::Decompressor.new(data.dup, theirs, table_size_limit: 4096).decode
        assert_equal expected, ours.decode(data, 4096), "block #{n} (#{huffman})"
        assert_equal fields, expected
      end
    end
  end

  def test_a_bad_huffman_string_is_still_refused
    data = "\x00\x81\x80\x81\xff".b # a literal name "\x80" (raw), a Huffman value of one 0xff byte (an EOS prefix)
    assert_raises(Protocol::HPACK::Error) { Heron::HTTP2::Decoder.new.decode(data) }
  end

  def test_malformed_blocks_are_refused
    ["\x80".b, # index 0
     "\xbf\x01".b, # index 64: no dynamic entry
     "\x41\x05abc".b, # a string longer than the block
     "\x41".b, # truncated
     "\xff\xff\xff\xff\xff\x7f".b, # an integer past 2^28
     "\x3f\xe2\x1f".b].each do |data| # a table size update past our 4096
      assert_raises(Protocol::HPACK::CompressionError, data.inspect) { Heron::HTTP2::Decoder.new.decode(data, 4096) }
    end
  end
end
