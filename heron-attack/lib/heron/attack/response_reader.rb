# frozen_string_literal: true

require_relative "response"
require_relative "protocol_error"

module Heron
  module Attack
    # Reads one HTTP/1.x response from a {Connection}: status line, headers, and a body framed
    # by Content-Length, chunked transfer-encoding, or the end of the connection. Bodies are
    # counted and dropped.
    class ResponseReader
      NO_BODY = [204, 304].freeze
      # The only headers the reader needs; others are skipped without being split.
      FRAMING = /\r\n(content-length|transfer-encoding|connection)[ \t]*:([^\r\n]*)/i
      STATUS_LINE = /\AHTTP\/1\.\d \d{3}(?: |\r|\z)/

      # @param connection [Connection]
      def initialize(connection)
        @connection = connection
      end

      # @param head [Boolean] whether the request was HEAD (no body follows).
      # @return [Response]
      # @raise [ProtocolError] for a malformed status line or chunk size.
      def read(head: false)
        status, version, lines = read_status
        headers = framing_headers(lines)
        keepalive = keepalive?(version, headers)
        bytes = no_body?(status, head) ? 0 : read_body(headers)
        keepalive = false if bytes.nil?
        Response.new(status, bytes || @read_to_eof, keepalive)
      end

      private

      # Reads whole heads, skipping interim (1xx) ones; the status comes from fixed offsets of
      # "HTTP/1.x NNN", so the common case allocates the head and nothing else.
      def read_status
        loop do
          head = @connection.read_head
          status = STATUS_LINE.match?(head) ? head.byteslice(9, 3).to_i : raise(ProtocolError, "bad status line #{head[0, 40].inspect}")
          return [status, head.byteslice(5, 3), head] unless status < 200
        end
      end

      # The framing headers of a head, found with one scan instead of a split per line.
      def framing_headers(head)
        headers = {}
        head.scan(FRAMING) { |name, value| headers[name.downcase] = value.strip }
        headers
      end

      def keepalive?(version, headers)
        connection = headers["connection"].to_s.downcase
        version == "1.1" ? connection != "close" : connection == "keep-alive"
      end

      def no_body?(status, head)
        head || NO_BODY.include?(status)
      end

      def read_body(headers)
        return read_chunked if headers["transfer-encoding"].to_s.downcase.include?("chunked")
        return @connection.skip(Integer(headers["content-length"], 10)) if headers["content-length"]
        @read_to_eof = @connection.skip_to_eof
        nil
      rescue ArgumentError
        raise ProtocolError, "bad content-length #{headers['content-length'].inspect}"
      end

      def read_chunked
        total = 0
        while (size = chunk_size).positive?
          total += @connection.skip(size)
          @connection.skip(2)
        end
        nil until @connection.read_line.empty?
        total
      end

      def chunk_size
        line = @connection.read_line
        Integer(line.split(";", 2).first.strip, 16)
      rescue ArgumentError
        raise ProtocolError, "bad chunk size #{line[0, 20].inspect}"
      end
    end
  end
end
