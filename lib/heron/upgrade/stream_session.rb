# frozen_string_literal: true

require "async/notification"
require_relative "client"
require_relative "../sse/codec"
require_relative "../timeout_error"
require "protocol/http2/error"

module Heron
  module Upgrade
    # A `rack.upgrade` SSE stream over HTTP/2: the same handler and client API as
    # Upgrade::Session, on one stream of a multiplexed connection. Its events go out as DATA
    # frames within the flow-control windows, from the fiber that writes (so `write` waits while
    # the client's window is shut, up to write_timeout, and `pending` is always 0); the stream's
    # own fiber waits until the app closes it or the client resets it, then on_close. It is not
    # parked: an HTTP/2 connection's streams share one socket, which its connection reads.
    class StreamSession
      # @return [Upgrade::Client]
      attr_reader :client
      # @return [Object] the app's handler.
      attr_reader :handler

      # @param stream [HTTP2::Stream]
      # @param send [#call] sends a String as DATA frames (HTTP2::Framing's chunk writer).
      # @param handler [Object]
      # @param env [Hash]
      # @param logger [Log::Logger]
      def initialize(stream, send, handler, env, logger)
        @stream = stream
        @send = send
        @handler = handler
        @logger = logger
        @codec = SSE::Codec.new
        @client = Client.new(self, env)
        @ended = Async::Notification.new
        @thread = Thread.current
        @open = true
      end

      # on_open, then waits in the stream's fiber until the stream ends; on_close last.
      # @return [void]
      def run
        callback(:on_open)
        @ended.wait while @open && !@stream.closed?
      ensure
        @open = false
        callback(:on_close)
      end

      # See Client#write.
      def write(data)
        raise TypeError, "rack.upgrade clients write Strings, not #{data.class}" unless data.is_a?(String)
        raise ThreadError, "a rack.upgrade client is written to from its server thread" unless Thread.current.equal?(@thread)
        return false unless open?
        @send.call(@codec.message(data))
        true
      rescue IOError, SystemCallError, Heron::TimeoutError, Protocol::HTTP2::Error # EOFError is an IOError
        close
        false
      end

      # See Client#close: the stream ends (END_STREAM) once {#run} returns.
      # @return [void]
      def close
        @open = false
        @ended.signal
      end

      # Graceful stop: on_shutdown (in a task of its own, so it may write), then the stream ends.
      # @return [void]
      def shutdown
        return unless open?
        return close unless @handler.respond_to?(:on_shutdown)
        Async::Task.current.async(annotation: "heron on_shutdown") do
          callback(:on_shutdown)
          close
        end
      end

      # The stream ended from the client's side (a reset, or its connection went away).
      # @return [void]
      def stream_closed = @ended.signal

      # @return [Boolean]
      def open? = @open && !@stream.closed?

      # @return [Integer] 0 while open (writes wait for the window instead of queueing), -1 after.
      def pending = open? ? 0 : -1

      private

      def callback(name)
        return unless @handler.respond_to?(name)
        @handler.public_send(name, @client)
      rescue StandardError, ScriptError => e
        @logger.error("rack.upgrade handler's #{name} raised", e)
        close
      end
    end
  end
end
