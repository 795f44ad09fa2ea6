# frozen_string_literal: true

require "protocol/hpack"
require "protocol/http2/error"
require_relative "../native"
require_relative "env_builder" # its Malformed and InvalidTarget, which #request returns
Heron::Native.load("heron_ext")

module Heron
  module HTTP2
    # The HPACK decoder (RFC 7541) of one connection's request headers, in C
    # (ext/heron/hpack_decoder.c, the decoding with no Ruby in it, fuzzed by
    # ext/heron/fuzz/fuzz_hpack_decoder.c; ext/heron/heron_http2_decoder.c, this binding).
    #
    #   decoder = Heron::HTTP2::Decoder.new       # table_size = 4096 at first
    #   decoder.decode(block, 4096)               # => frozen [[name, value], ...] (UTF-8 Strings)
    #   decoder.decode(block, 4096, 65_536)       # the same, the header list bounded
    #   decoder.request(block, 4096, 65_536, env) # => nil, or the stream error (not raised)
    #
    # #request adds a request's block straight to its Rack env, as RequestFields' rules say
    # (the request line from the pseudo-headers, HTTP_* keys, the refusals), with no Array or
    # pair per field between: a request read in one C call, as HTTP/1.1's parser reads one.
    # #decode gives the fields themselves (a HEADERS frame read the generic way, trailers, a
    # refused stream's block): the table's pairs, frozen, shared while the entry stays; a block
    # of one-byte indexed fields only, the same bytes as the last one, gives the same frozen
    # Array again (such a block cannot change the table).
    #
    # Everything is bounded: integers below 2^28, strings within the block, the dynamic table
    # within the size we advertised (a size update past `table_size_limit`, or after a field,
    # is refused), Huffman padding as RFC 7541 §5.2 says; the header list within
    # `header_limit` bytes (counted as RFC 9113 §6.5.2 does) and Decoder::MAX_FIELDS fields.
    #
    # Errors: a malformed block raises Protocol::HPACK::CompressionError (the connection ends
    # with COMPRESSION_ERROR), a header list past its limits Protocol::HTTP2::ProtocolError with
    # ENHANCE_YOUR_CALM. Every method is documented at its definition in the C file.
    class Decoder
    end
  end
end
