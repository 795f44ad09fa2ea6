# frozen_string_literal: true

require "protocol/hpack"

module Heron
  module HTTP2
    # The HPACK encoder (RFC 7541) of one connection's response headers, in a hash lookup per
    # field. protocol-hpack's builds a command Hash per field, walks the whole dynamic table for
    # each one and decodes its own output to keep its table: about a third of the Ruby calls of
    # a hello request over h2c went there. Here the dynamic table is a Hash of name => value =>
    # insertion number, so a field's index is 62 + how many entries were added since it was.
    #
    # Fields whose values differ in every response (x-request-id, ...) are sent as literals
    # without indexing (§6.2.2): indexed, each would evict a field that repeats. Strings go out
    # without Huffman coding (a Ruby loop per byte in protocol-hpack), which costs a few bytes of
    # the fields not indexed already: those unique ones, and each field's first use.
    class Encoder
      # Response fields whose values are (nearly) never sent twice.
      UNIQUE = %w[x-request-id x-runtime etag set-cookie last-modified].freeze
      STATIC = Protocol::HPACK::Context::STATIC_TABLE
      # name => value => static index (1-based, as on the wire)
      EXACT = STATIC.each_with_index.with_object({}) { |((name, value), i), all| (all[name] ||= {})[value] ||= i + 1 }.freeze
      # name => the first static index with that name
      NAMES = STATIC.each_with_index.with_object({}) { |((name, _), i), all| all[name] ||= i + 1 }.freeze
      FIRST_DYNAMIC = STATIC.size + 1
      ENTRY_OVERHEAD = 32
      private_constant :STATIC, :EXACT, :NAMES, :FIRST_DYNAMIC, :ENTRY_OVERHEAD

      # @param table_size [Integer] the dynamic table's size at first (the protocol's default).
      def initialize(table_size = 4096)
        @limit = table_size
        @entries = {} # name => { value => insertion number }
        @order = [] # [name, value, size], oldest first
        @size = 0
        @inserted = 0
      end

      # Appends the header block of `fields` to `buffer`.
      # @param fields [Array<Array(String, String)>] lower-case names.
      # @param buffer [String] binary.
      # @param table_size [Integer, nil] the peer's SETTINGS_HEADER_TABLE_SIZE: a change is
      #   announced at the block's start (§6.3) and the table shrunk to fit.
      # @return [String] buffer.
      def encode(fields, buffer = String.new(encoding: Encoding::BINARY), table_size = nil)
        resize(buffer, table_size) if table_size && table_size != @limit
        fields.each do |name, value|
          index = EXACT[name]&.[](value) || ((inserted = @entries[name]&.[](value)) && FIRST_DYNAMIC + @inserted - 1 - inserted)
          index && index < 0x7f ? buffer << (0x80 | index) : field(buffer, name, value, index) # §6.1 in one byte
        end
        buffer
      end

      private

      def field(buffer, name, value, index)
        return integer(buffer, index, 7, 0x80) if index
        size = name.bytesize + value.bytesize + ENTRY_OVERHEAD
        indexed = size <= @limit && !UNIQUE.include?(name)
        literal(buffer, name, value, indexed ? 0x40 : 0x00, indexed ? 6 : 4)
        add(name, value, size) if indexed
      end

      # A literal field (§6.2.1 with `pattern` 0x40, §6.2.2 with 0x00): the name by its static
      # index when it has one.
      def literal(buffer, name, value, pattern, bits)
        if (index = NAMES[name])
          integer(buffer, index, bits, pattern)
        else
          buffer << pattern
          string(buffer, name)
        end
        string(buffer, value)
      end

      def string(buffer, value)
        integer(buffer, value.bytesize, 7, 0)
        buffer << (value.ascii_only? ? value : value.b)
      end

      # §5.1: `value` on a `bits`-bit prefix, with `pattern` in the first byte's high bits.
      def integer(buffer, value, bits, pattern)
        limit = (1 << bits) - 1
        return buffer << (pattern | value) if value < limit
        buffer << (pattern | limit)
        value -= limit
        while value >= 128
          buffer << ((value & 0x7f) | 0x80)
          value >>= 7
        end
        buffer << value
      end

      def add(name, value, size)
        evict(@limit - size)
        name = name.dup.freeze unless name.frozen? # kept: a caller's String may change later
        value = value.dup.freeze unless value.frozen?
        (@entries[name] ||= {})[value] = @inserted
        @inserted += 1
        @order << [name, value, size]
        @size += size
      end

      # Drops the oldest entries until the table holds at most `room` bytes.
      def evict(room)
        while @size > room
          name, value, size = @order.shift
          values = @entries[name]
          values.delete(value)
          @entries.delete(name) if values.empty?
          @size -= size
        end
      end

      def resize(buffer, table_size)
        @limit = table_size
        evict(@limit)
        integer(buffer, table_size, 5, 0x20)
      end
    end
  end
end
