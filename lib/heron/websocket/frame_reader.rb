# frozen_string_literal: true

require_relative "../http_parser" # loads heron_ext, which defines WebSocket::Mask
require_relative "frame"
require_relative "protocol_error"

module Heron
  module WebSocket
    # Reads client frames from a buffer as they arrive, a piece at a time, and puts fragmented
    # messages back together. It never waits: a frame not yet complete stays in the buffer
    # until more bytes come, so the connection can wait parked between them, without a fiber.
    # (protocol-websocket's Framer reads from a stream, waiting in a fiber for each part.)
    # Everything RFC 6455 section 5 forbids raises ProtocolError with the close code to send.
    class FrameReader
      # Close codes a client may send (RFC 6455 section 7.4, IANA registry); 3000-4999 are
      # for libraries and applications.
      VALID_CLOSE = [1000, 1001, 1002, 1003, *1007..1014].freeze
      private_constant :VALID_CLOSE

      # @param max_message_size [Integer] bytes a message (all its fragments) may have.
      def initialize(max_message_size)
        @max = max_message_size
        @fragments = nil
        @opcode = nil
      end

      # Takes the next whole message or control frame off the front of `buffer`.
      # @param buffer [String] binary bytes received; what is read is removed.
      # @return [Array(Integer, String), nil] opcode and payload (a text message's is UTF-8, a
      #   close frame's is [code, reason]), or nil until more bytes come.
      # @raise [ProtocolError]
      def read(buffer)
        while (frame = next_frame(buffer))
          message = assemble(*frame)
          return message if message
        end
        nil
      end

      private

      # @return [Array(Integer, Boolean, String), nil] opcode, final, unmasked payload.
      def next_frame(buffer)
        return nil if buffer.bytesize < 2
        first, second = buffer.unpack("CC")
        opcode = first & 0x0f
        final = first.anybits?(0x80)
        check_header(first, second, opcode, final)
        header = payload_length(buffer, second & 0x7f) or return nil
        length, offset = header
        check_size(opcode, length)
        total = offset + 4 + length
        return nil if buffer.bytesize < total
        payload = Mask.apply(buffer.byteslice(offset + 4, length), buffer.byteslice(offset, 4))
        buffer[0, total] = ""
        [opcode, final, payload]
      end

      def check_header(first, second, opcode, final)
        raise ProtocolError.new(1002, "reserved bits set without an extension") if first.anybits?(0x70)
        raise ProtocolError.new(1002, "client frame not masked") unless second.anybits?(0x80)
        raise ProtocolError.new(1002, "reserved opcode #{opcode}") if (3..7).cover?(opcode) || opcode > 0xA
        return if opcode < 8
        raise ProtocolError.new(1002, "fragmented control frame") unless final
        raise ProtocolError.new(1002, "control frame longer than 125 bytes") if (second & 0x7f) > 125
      end

      # @return [Array(Integer, Integer), nil] payload length and where the masking key starts.
      def payload_length(buffer, length)
        case length
        when 126 then buffer.bytesize >= 4 ? [buffer.unpack1("n", offset: 2), 4] : nil
        when 127
          return nil if buffer.bytesize < 10
          length = buffer.unpack1("Q>", offset: 2)
          raise ProtocolError.new(1002, "payload length with its top bit set") if length >= 2**63
          [length, 10]
        else [length, 2]
        end
      end

      # Refused from the header, before the payload is buffered.
      def check_size(opcode, length)
        return if opcode >= 8
        size = length + (@fragments ? @fragments.bytesize : 0)
        raise ProtocolError.new(1009, "message of #{size} bytes exceeds #{@max}") if size > @max
      end

      def assemble(opcode, final, payload)
        return control(opcode, payload) if opcode >= 8
        if opcode == Frame::CONTINUATION
          raise ProtocolError.new(1002, "continuation frame outside a message") unless @fragments
          @fragments << payload
        else
          raise ProtocolError.new(1002, "new message before the fragmented one ended") if @fragments
          @opcode = opcode
          @fragments = payload
        end
        complete if final
      end

      def complete
        data = @fragments
        @fragments = nil
        return [Frame::BINARY, data] if @opcode == Frame::BINARY
        data.force_encoding(Encoding::UTF_8)
        raise ProtocolError.new(1007, "text message is not valid UTF-8") unless data.valid_encoding?
        [Frame::TEXT, data]
      end

      def control(opcode, payload)
        return [opcode, payload] unless opcode == Frame::CLOSE
        [opcode, close_status(payload)]
      end

      # @return [Array(Integer, String)] the close frame's code (1005 when it has none) and reason.
      def close_status(payload)
        return [1005, ""] if payload.empty?
        raise ProtocolError.new(1002, "close frame with a one-byte payload") if payload.bytesize == 1
        code = payload.unpack1("n")
        raise ProtocolError.new(1002, "invalid close code #{code}") unless VALID_CLOSE.include?(code) || (3000..4999).cover?(code)
        reason = payload.byteslice(2, payload.bytesize - 2).force_encoding(Encoding::UTF_8)
        raise ProtocolError.new(1007, "close reason is not valid UTF-8") unless reason.valid_encoding?
        [code, reason]
      end
    end
  end
end
