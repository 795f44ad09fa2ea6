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
      FRAMING = /\A(?:content-length|transfer-encoding|connection)[ \t]*:/i

      # @param connection [Connection]
      def initialize(connection)
        @connection = connection
      end

      # @param head [Boolean] whether the request was HEAD (no body follows).
      # @return [Response]
      # @raise [ProtocolError] for a malformed status line or chunk size.
      def read(head: false)
        status, version = read_status
        headers = read_headers
        keepalive = keepalive?(version, headers)
        bytes = no_body?(status, head) ? 0 : read_body(headers)
        keepalive = false if bytes.nil?
        Response.new(status, bytes || @read_to_eof, keepalive)
      end

      private

      def read_status
        line = @connection.read_line
        line = @connection.read_line while line.match?(/\AHTTP\/1\.\d 1\d\d/) && skip_interim
        match = line.match(/\AHTTP\/(1\.\d) (\d{3})/) or raise ProtocolError, "bad status line #{line[0, 40].inspect}"
        [match[2].to_i, match[1]]
      end

      def skip_interim
        read_headers
        true
      end

      def read_headers
        headers = {}
        while (line = @connection.read_line) != ""
          next unless FRAMING.match?(line)
          name, value = line.split(":", 2)
          headers[name.strip.downcase] = value.strip
        end
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
