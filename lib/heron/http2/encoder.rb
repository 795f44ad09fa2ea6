# frozen_string_literal: true

require "protocol/hpack"

module Heron
  module HTTP2
    # The HPACK context a connection encodes its response headers with: protocol-hpack's, except
    # that fields whose values differ in every response are sent as literals without indexing
    # (RFC 7541 §6.2.2) rather than added to the dynamic table. Indexed, each such value would
    # evict a field that repeats (content-type, date, ...) and, the table always full, make every
    # later field's lookup walk all of it: an x-request-id on every response cost more than the
    # rest of the request over HTTP/2. Strings go out without Huffman coding: protocol-hpack's
    # coder is Ruby, a loop per byte, and what it saves is a few bytes of the fields that are not
    # indexed already (the unique ones above, and each field's first use on a connection).
    class Encoder < Protocol::HPACK::Context
      # Response fields whose values are (nearly) never sent twice.
      UNIQUE = %w[x-request-id x-runtime etag set-cookie last-modified].freeze

      def initialize(...)
        super
        @huffman = :never
      end

      # @param name [String]
      # @param value [String]
      # @return [Hash] the command protocol-hpack writes for the field.
      def add_command(name, value)
        return super unless UNIQUE.include?(name)
        # never in the dynamic table, so not looked for there (a walk of the whole table)
        { name: Protocol::HPACK::Context::STATIC_NAME_LOOKUP[name] || name, value: value, type: :no_index }
      end
    end
  end
end
