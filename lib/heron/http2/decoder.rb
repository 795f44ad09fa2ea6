# frozen_string_literal: true

require "protocol/hpack"

module Heron
  module HTTP2
    # protocol-hpack's decompressor with the Huffman-coded strings it decodes remembered, per
    # process: protocol-hpack decodes Huffman in Ruby, bit by bit, and a client sends the same
    # few strings (its user-agent, accept, authority, the paths) on every new connection, where
    # the dynamic table is still empty. Short strings only, and a bounded number of them (the
    # cache is emptied when full), so a client sending new values each time costs a lookup.
    class Decoder < Protocol::HPACK::Decompressor
      MAX_ENTRIES = 1024
      MAX_BYTES = 128
      CACHE = {} # rubocop:disable Style/MutableConstant -- the process-wide cache itself
      private_constant :MAX_ENTRIES, :MAX_BYTES, :CACHE

      # @return [String] the next string literal (RFC 7541 §5.2), decoded, UTF-8 tagged.
      # @raise [Protocol::HPACK::CompressionError]
      def read_string
        return super unless (peek_byte & 0x80) == 0x80
        length = read_integer(7)
        raise Protocol::HPACK::CompressionError, "Invalid string length!" unless length
        coded = read_bytes(length)
        raise Protocol::HPACK::CompressionError, "Invalid string length, got #{coded.bytesize}, expecting #{length}!" unless coded.bytesize == length
        decoded(coded).dup.force_encoding(Encoding::UTF_8)
      end

      private

      def decoded(coded)
        return Protocol::HPACK::Huffman.decode(coded) if coded.bytesize > MAX_BYTES
        CACHE[coded] ||= begin
          CACHE.clear if CACHE.size >= MAX_ENTRIES
          Protocol::HPACK::Huffman.decode(coded).freeze
        end
      end
    end
  end
end
