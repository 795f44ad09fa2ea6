# frozen_string_literal: true

module Heron
  module WebSocket
    # The client broke RFC 6455, or a limit: the server closes the connection with {#code}
    # (1002 protocol error, 1007 invalid payload data, 1009 message too big).
    class ProtocolError < StandardError
      # @return [Integer] the close code the server sends.
      attr_reader :code

      # @param code [Integer]
      # @param message [String]
      def initialize(code, message)
        super(message)
        @code = code
      end
    end
  end
end
