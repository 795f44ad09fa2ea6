# frozen_string_literal: true

require_relative "../http_parser"

module Heron
  class Server
    # The HTTP/1.1 parsers of one reactor thread's connections. A connection parked between
    # requests gives its parser back (about 1 KiB it would otherwise keep while it waits with no
    # fiber: Connection#let_go) and takes one again when its next request comes; at 5,000 requests
    # a second on kept-alive connections that park between them, making a parser each time was
    # 0.26-0.79 parsers per request, each with the two Hashes of its keyword arguments
    # (bench/results/slow_requests.md). Those given back are kept here, up to KEPT, and lent
    # again; one is reset before each request it parses (Connection::RequestReader#read_request).
    class ParserPool
      # Parsers kept for reuse; more are dropped (the garbage collector frees them).
      KEPT = 256

      # @param config [Configuration] the parsers' limits.
      def initialize(config)
        @config = config
        @kept = []
      end

      # @return [HTTPParser] a parser given back earlier, or a new one with the configured limits.
      def take = @kept.pop || build

      # Keeps a parser its connection no longer uses, for the next {#take}.
      # @param parser [HTTPParser]
      # @return [nil]
      def give(parser)
        @kept << parser if @kept.size < KEPT
        nil
      end

      private

      def build
        HTTPParser.new(max_target_bytes: @config.max_target_bytes, max_header_bytes: @config.max_header_bytes,
                       max_header_fields: @config.max_header_fields,
                       max_chunk_extension_bytes: @config.max_chunk_extension_bytes,
                       max_total_chunk_extension_bytes: @config.max_total_chunk_extension_bytes)
      end
    end
  end
end
