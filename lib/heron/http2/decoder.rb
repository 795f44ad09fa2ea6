# frozen_string_literal: true

require "protocol/hpack"

module Heron
  module HTTP2
    # The HPACK decoder (RFC 7541) of one connection's request headers. protocol-hpack's builds a
    # command Hash per field, then a copy of it, and reads each integer through a few method
    # calls: a third of a hello request's Ruby calls over h2c were HPACK's. This one reads the
    # block in one loop and hands out the table's own frozen [name, value] pairs.
    #
    # Huffman-coded strings are decoded by protocol-hpack (in Ruby, bit by bit) and remembered
    # per process: a client sends the same few strings (its user-agent, accept, authority, the
    # paths) on every new connection, where the dynamic table is still empty. Short strings only
    # and a bounded number of them (the cache is emptied when full), so a client sending new
    # values each time costs a lookup.
    #
    # A block of indexed fields only, the same bytes as the last one, is not decoded again: a
    # client repeating a request on its connection (an API poll, a load generator) sends that.
    class Decoder
      STATIC = Protocol::HPACK::Context::STATIC_TABLE.map { |pair| pair.map(&:freeze).freeze }.freeze
      ENTRY_OVERHEAD = 32
      MAX_ENTRIES = 1024
      MAX_BYTES = 128
      CACHE = {} # rubocop:disable Style/MutableConstant -- the process-wide cache itself
      private_constant :STATIC, :ENTRY_OVERHEAD, :MAX_ENTRIES, :MAX_BYTES, :CACHE

      # @param table_size [Integer] the dynamic table's size at first (the protocol's default).
      def initialize(table_size = 4096)
        @table = [] # newest first
        @size = 0
        @max = table_size
        @last_block = nil # the last block, when it was indexed fields only (#remember)
        @last_fields = nil
      end

      # @param data [String] a whole header block.
      # @param table_size_limit [Integer] our SETTINGS_HEADER_TABLE_SIZE: the most a dynamic
      #   table size update may ask for.
      # @return [Array<Array(String, String)>] the fields, frozen (UTF-8 tagged, as protocol-hpack's);
      #   the Array itself frozen and shared when the block repeats the last one (#remember).
      # @raise [Protocol::HPACK::CompressionError] for a malformed block.
      def decode(data, table_size_limit = 4096)
        return @last_fields if data == @last_block
        @last_block = nil
        @data = data
        @offset = 0
        fields = []
        plain = true
        while @offset < data.bytesize
          byte = data.getbyte(@offset)
          unless byte > 0x80 && byte < 0xff
            plain = false
            next fields << field(table_size_limit)
          end
          # §6.1 with the index in the first byte (1 to 126): most fields of a request after a
          # connection's first, read here, where #field would take four calls.
          @offset += 1
          index = byte & 0x7f
          pair = index <= STATIC.size ? STATIC[index - 1] : @table[index - STATIC.size - 1]
          fields << (pair or raise Protocol::HPACK::CompressionError, "invalid index #{index}")
        end
        fields.compact!
        plain ? remember(data, fields.freeze) : fields
      ensure
        @data = nil
      end

      private

      # A block of one-byte indexed fields only changes nothing in the table, so the same bytes
      # next time (a client repeating a request on its connection) give the same fields, until
      # a block that is not such a one (which may change the table) comes between.
      # The block is kept as a frozen copy (a copy-on-write one: no bytes are copied), so a caller
      # that reuses its String cannot make a later block look like this one.
      def remember(data, fields)
        @last_block = data.frozen? ? data : data.dup.freeze
        @last_fields = fields
      end

      def field(table_size_limit)
        byte = @data.getbyte(@offset)
        return entry(integer(7)) if byte >= 0x80
        return literal(integer(6), true) if byte >= 0x40
        return resize(integer(5), table_size_limit) if byte >= 0x20
        literal(integer(4), false) # without indexing (0x00) or never indexed (0x10)
      end

      # §6.1: an entry of the static or the dynamic table.
      def entry(index)
        pair = index <= STATIC.size ? STATIC[index - 1] : @table[index - STATIC.size - 1]
        raise Protocol::HPACK::CompressionError, "invalid index #{index}" if index.zero? || pair.nil?
        pair
      end

      # §6.2: a literal value, its name an entry's or a literal too.
      def literal(name_index, indexed)
        name = name_index.zero? ? string : entry(name_index).first
        pair = [name, string].each(&:freeze).freeze
        add(pair) if indexed
        pair
      end

      # §6.3: a dynamic table size update (no field).
      def resize(size, limit)
        raise Protocol::HPACK::CompressionError, "table size #{size} exceeds limit #{limit}" if size > limit
        @max = size
        evict(0)
        nil
      end

      # §4.4: the entry goes first; the oldest ones leave until it fits (a too large one empties
      # the table and is not added).
      def add(pair)
        size = pair[0].bytesize + pair[1].bytesize + ENTRY_OVERHEAD
        evict(size)
        return if size > @max
        @table.unshift(pair)
        @size += size
      end

      def evict(room)
        while @size + room > @max && (pair = @table.pop)
          @size -= pair[0].bytesize + pair[1].bytesize + ENTRY_OVERHEAD
        end
      end

      # §5.1: an integer on a `bits`-bit prefix, then 7 bits per byte (at most 4 bytes more: no
      # field, length or size here is near 2^28).
      def integer(bits)
        limit = (1 << bits) - 1
        value = byte & limit
        return value if value < limit
        shift = 0
        loop do
          raise Protocol::HPACK::CompressionError, "integer too large" if shift > 21
          octet = byte
          value += (octet & 0x7f) << shift
          return value if octet < 0x80
          shift += 7
        end
      end

      def byte
        octet = @data.getbyte(@offset) or raise Protocol::HPACK::CompressionError, "header block truncated"
        @offset += 1
        octet
      end

      # §5.2: a string literal, raw or Huffman-coded.
      def string
        huffman = @data.getbyte(@offset).to_i >= 0x80
        length = integer(7)
        raise Protocol::HPACK::CompressionError, "header block truncated" if @offset + length > @data.bytesize
        coded = @data.byteslice(@offset, length)
        @offset += length
        huffman ? decoded(coded).dup.force_encoding(Encoding::UTF_8) : coded.force_encoding(Encoding::UTF_8)
      end

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
