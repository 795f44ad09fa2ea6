# frozen_string_literal: true

module Heron
  module SSE
    # What an EventSource (server-sent events) connection says on the wire, for
    # Upgrade::Session: each String the app writes is one event (`data:` lines and a blank
    # line); a ping is a comment line, which clients ignore, so proxies see traffic and a gone
    # client shows up as a failed write. The client sends nothing after its request.
    class Codec
      PING = ":\n\n"
      private_constant :PING

      # @return [Boolean] false: an EventSource never answers, its liveness shows in writes.
      def answers_pings? = false

      # @param data [String]
      # @return [String] one event whose data is `data` (each of its lines a `data:` line).
      def message(data)
        event = +""
        data.each_line { |line| event << "data: " << line.chomp << "\n" }
        event << "data: \n" if data.empty?
        event << "\n"
      end

      # @return [String] a comment, for keep-alive.
      def ping = PING

      # @return [nil] SSE has no pings to answer.
      def pong(_payload) = nil

      # @return [nil] SSE has no close message: the server ends the response by closing.
      def close(_code, _reason = "") = nil

      # Drops whatever the client sent (an EventSource sends nothing after its request).
      # @param buffer [String]
      # @return [nil]
      def read(buffer)
        buffer.clear
        nil
      end
    end
  end
end
