# frozen_string_literal: true

require "rack/utils"
require_relative "../native"
Heron::Native.load("heron_ext")
require_relative "invalid"

module Heron
  module Response
    # Builds the status line and header block of a response.
    class Head
      STATUS_LINES = Hash.new do |cache, status|
        reason = Rack::Utils::HTTP_STATUS_CODES[status] || "Unknown"
        cache[status] = "HTTP/1.1 #{status} #{reason}\r\n".b.freeze
      end

      # @param status [Integer]
      # @param headers [Hash{String => String, Array<String>}] the app's headers, after
      #   {Head.normalize} (lower-case names).
      # @param extra [String] framing lines the server adds ("content-length: 5\r\n", ...).
      # @return [String] the whole head, ending in the blank line (binary, mutable).
      # @raise [Response::Invalid] for a header name that is not a token, or a value with CR or NUL
      #   in it (see `append_fields`, in C: ext/heron/heron_response_head.c); LF splits a value
      #   into lines.
      def self.build(status, headers, extra)
        head = String.new(STATUS_LINES[status], capacity: 512)
        append_fields(head, headers)
        head << extra << "\r\n"
      end
    end
  end
end
