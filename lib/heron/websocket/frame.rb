# frozen_string_literal: true

module Heron
  module WebSocket
    # RFC 6455 frames as the server writes them: final, unmasked, no extensions.
    module Frame
      CONTINUATION = 0x0
      TEXT = 0x1
      BINARY = 0x2
      CLOSE = 0x8
      PING = 0x9
      PONG = 0xA

      # @param opcode [Integer]
      # @param payload [String] any encoding; its bytes are sent.
      # @return [String] the frame, binary.
      def self.build(opcode, payload)
        length = payload.bytesize
        head = if length < 126 then [0x80 | opcode, length].pack("CC")
               elsif length < 65_536 then [0x80 | opcode, 126, length].pack("CCn")
               else [0x80 | opcode, 127, length].pack("CCQ>")
               end
        head << payload.b
      end

      # @param code [Integer] status code (RFC 6455 section 7.4).
      # @param reason [String] at most 123 bytes of UTF-8.
      # @return [String] a close frame.
      def self.close(code, reason = "")
        build(CLOSE, [code].pack("n") << reason.b.byteslice(0, 123))
      end
    end
  end
end
