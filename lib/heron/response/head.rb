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

      # `content-length` lines for the body sizes most responses have, made once each.
      LENGTH_LINES = Hash.new do |cache, length|
        line = "content-length: #{length}\r\n".b.freeze
        length < 4096 ? cache[length] = line : line
      end

      # @param status [Integer]
      # @param headers [Hash{String => String, Array<String>}] the app's headers, after
      #   {Head.normalize} (lower-case names).
      # @param extra [String] framing lines the server adds ("content-length: 5\r\n", ...).
      # @param date [String] the `date` line, or "" (see HTTPDate#line).
      # @param connection [String] the `connection` line, or "".
      # @return [String] the whole head, ending in the blank line (binary, mutable), built in one
      #   String by `assemble` (C: ext/heron/heron_response_head.c), with room for the body.
      # @raise [Response::Invalid] for a header name that is not a token, or a value with CR or NUL
      #   in it (see `assemble`, in C); LF splits a value into lines.
      def self.build(status, headers, extra, date = "", connection = "")
        assemble(STATUS_LINES[status], headers, extra, date, connection)
      end

      # As {.build}, into `buffer` (emptied first, its memory kept; `assemble_into`, in C): the
      # head of a response written at once (Response::Writer), in a buffer its reactor thread's
      # connections share, so a response makes no String and no malloc for its head.
      # @param buffer [String] binary; see Server::Context#head_buffer.
      # @return [String] buffer
      def self.build_into(buffer, status, headers, extra, date, connection)
        assemble_into(buffer, STATUS_LINES[status], headers, extra, date, connection)
      end

      # @param length [Integer] body bytes.
      # @return [String] "content-length: LENGTH\r\n" (frozen; shared for small lengths).
      def self.content_length(length) = LENGTH_LINES[length]
    end
  end
end
