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
      STATUS_LINE = /\AHTTP\/1\.\d \d{3}(?: |\r|\z)/
      # The only headers the reader needs (names lowercased, each after its line's CRLF); others
      # are never looked at.
      CONTENT_LENGTH = "\r\ncontent-length"
      TRANSFER_ENCODING = "\r\ntransfer-encoding"
      CONNECTION = "\r\nconnection"
      # A field value, from its first byte: "close" or "keep-alive" and nothing after but blanks.
      CLOSE = /\Gclose[ \t]*(?:\r|\z)/
      KEEP_ALIVE = /\Gkeep-alive[ \t]*(?:\r|\z)/
      ZERO = "0".ord
      BLANKS = [" ".ord, "\t".ord].freeze
      private_constant :CONTENT_LENGTH, :TRANSFER_ENCODING, :CONNECTION, :CLOSE, :KEEP_ALIVE, :ZERO, :BLANKS

      # @param connection [Connection]
      def initialize(connection)
        @connection = connection
      end

      # Reads a response. The head is looked at in place (a lowercased copy, searched for the
      # framing headers' names; the status and the length read byte by byte): a response costs
      # its head, that copy and the Response, at 2,500 responses a second per generator process
      # whose collections each mark thousands of waiting fibers (bench/results/slow_requests.md).
      # @param head [Boolean] whether the request was HEAD (no body follows).
      # @return [Response]
      # @raise [ProtocolError] for a malformed status line, content-length or chunk size.
      def read(head: false)
        text = read_status
        @lower = text.downcase(:ascii)
        keepalive = keepalive?(text)
        bytes = no_body?(@status, head) ? 0 : read_body
        keepalive = false if bytes.nil?
        Response.new(@status, bytes || @read_to_eof, keepalive)
      ensure
        @lower = nil
      end

      private

      # Reads whole heads, skipping interim (1xx) ones; the status comes from fixed offsets of
      # "HTTP/1.x NNN".
      # @return [String] the final response's head.
      def read_status
        loop do
          head = @connection.read_head
          raise ProtocolError, "bad status line #{head[0, 40].inspect}" unless STATUS_LINE.match?(head)
          @status = ((head.getbyte(9) - ZERO) * 100) + ((head.getbyte(10) - ZERO) * 10) + head.getbyte(11) - ZERO
          return head unless @status < 200
        end
      end

      # HTTP/1.1 keeps the connection unless told "close"; HTTP/1.0 closes it unless told "keep-alive".
      def keepalive?(head)
        at = value_at(CONNECTION)
        return !(at && CLOSE.match?(@lower, at)) if head.getbyte(7) == "1".ord
        at ? KEEP_ALIVE.match?(@lower, at) : false
      end

      def no_body?(status, head)
        head || NO_BODY.include?(status)
      end

      def read_body
        return read_chunked if chunked?
        length = content_length
        return @connection.skip(length) if length
        @read_to_eof = @connection.skip_to_eof
        nil
      end

      def chunked?
        at = value_at(TRANSFER_ENCODING) or return false
        found = @lower.index("chunked", at)
        !found.nil? && found < line_end(at)
      end

      # @return [Integer, nil] the content-length (nil when there is none).
      # @raise [ProtocolError] when it is not a number.
      def content_length
        at = value_at(CONTENT_LENGTH) or return nil
        last = line_end(at)
        last -= 1 while last > at && BLANKS.include?(@lower.getbyte(last - 1))
        digits(at, last)
      end

      def digits(from, to)
        length = 0
        at = from
        while at < to
          digit = @lower.getbyte(at) - ZERO
          raise ProtocolError, "bad content-length #{@lower.byteslice(from, to - from).inspect}" unless digit.between?(0, 9)
          length = (length * 10) + digit
          at += 1
        end
        raise ProtocolError, "bad content-length #{@lower.byteslice(from, to - from).inspect}" if from == to
        length
      end

      # @return [Integer, nil] where the value of the head's last `name` field begins (past the
      #   colon and blanks), nil when it has none.
      def value_at(name)
        from = @lower.bytesize
        while (at = @lower.rindex(name, from))
          colon = skip_blanks(at + name.bytesize)
          return skip_blanks(colon + 1) if @lower.getbyte(colon) == ":".ord
          return nil if at.zero?
          from = at - 1
        end
      end

      def skip_blanks(at)
        at += 1 while BLANKS.include?(@lower.getbyte(at))
        at
      end

      def line_end(at) = @lower.index("\r\n", at) || @lower.bytesize

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
