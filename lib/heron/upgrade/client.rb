# frozen_string_literal: true

module Heron
  module Upgrade
    # The `client` a `rack.upgrade` handler's callbacks receive (the API Iodine and Agoo define):
    # write to the connection, close it, ask whether it is open and how many writes wait.
    # From another thread, `write` and `close` are handed to the connection's reactor thread
    # (Upgrade::Mailbox) and happen there shortly after.
    class Client
      # @return [Hash] the Rack env of the request that was upgraded.
      attr_reader :env

      # @param session [Upgrade::Session]
      # @param env [Hash]
      def initialize(session, env)
        @session = session
        @env = env
      end

      # Schedules a message: a WebSocket frame (binary when `data` is binary, else text), or an
      # SSE event. Returns at once; what the socket cannot take now waits in {#pending}.
      # @param data [String]
      # @return [Boolean] false when the connection is closed or closing.
      def write(data) = @session.write(data)

      # Closes once what was written is sent (a WebSocket sends close 1000 and waits for the
      # client's reply).
      # @return [nil]
      def close
        @session.close
        nil
      end

      # @return [Boolean] false once the connection is closed or closing.
      def open? = @session.open?

      # @return [Integer] writes not yet sent (on_drained follows when they are), -1 when closed.
      def pending = @session.pending

      # @return [Object] the handler the app set in `rack.upgrade`.
      def handler = @session.handler
    end
  end
end
