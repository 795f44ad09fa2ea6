# frozen_string_literal: true

require "async/notification"
require_relative "callbacks"
require_relative "client"
require_relative "../sse/codec"
require_relative "../timeout_error"
require "protocol/http2/error"

module Heron
  module Upgrade
    # A `rack.upgrade` SSE stream over HTTP/2: the same handler and client API as
    # Upgrade::Session, on one stream of a multiplexed connection. Its events go out as DATA
    # frames within the flow-control windows, from the fiber that writes (so `write` waits while
    # the client's window is shut, up to write_timeout); the stream's own fiber waits until the
    # app closes it or the client resets it, then on_close. It is not parked: an HTTP/2
    # connection's streams share one socket, which its connection reads.
    #
    # A write or close from another thread is handed to the reactor thread (Upgrade::Mailbox),
    # which queues the write here ({#queue_write}, bounded by websocket_max_pending); the
    # stream's own fiber sends the queue in order, so a client whose window is shut holds up its
    # own stream only, not the mailbox every connection of the reactor shares.
    class StreamSession
      include Callbacks

      # @return [Upgrade::Client]
      attr_reader :client
      # @return [Object] the app's handler.
      attr_reader :handler

      # @param stream [HTTP2::Stream]
      # @param send [#call] sends a String as DATA frames (HTTP2::Framing's chunk writer).
      # @param handler [Object]
      # @param env [Hash]
      # @param context [Server::Context] the logger and websocket_max_pending.
      # @param mailbox [Upgrade::Mailbox] the reactor thread's, for writes from other threads.
      def initialize(stream, send, handler, env, context, mailbox)
        @stream = stream
        @send = send
        @handler = handler
        @context = context
        @mailbox = mailbox
        @codec = SSE::Codec.new
        @client = Client.new(self, env)
        @ended = Async::Notification.new
        @thread = Thread.current # the reactor thread: others hand their writes and closes to it
        @open = true
        @queued = nil # writes handed over from other threads, not yet sent
        @queued_bytes = 0
      end

      # on_open, then waits in the stream's fiber until the stream ends, sending the writes
      # other threads handed over; on_close last.
      # @return [void]
      def run
        callback(:on_open)
        loop do
          send_queued if @queued
          break unless open?
          @ended.wait
        end
      ensure
        @open = false
        callback(:on_close)
      end

      # See Client#write. From another thread the write is handed to the reactor thread's
      # mailbox, and true means it was scheduled while the stream was open.
      # @raise [TypeError] for anything but a String.
      def write(data)
        raise TypeError, "rack.upgrade clients write Strings, not #{data.class}" unless data.is_a?(String)
        return open? && @mailbox.post(self, :queue_write, data.dup) unless Thread.current.equal?(@thread)
        open? && transmit(@codec.message(data))
      end

      # A write handed over from another thread, delivered on the reactor thread by the mailbox:
      # queued for the stream's fiber. Past websocket_max_pending queued bytes (a client that
      # does not read) the stream is closed instead.
      # @param data [String]
      # @return [Boolean] false when the stream is closed or closing.
      def queue_write(data)
        return false unless open?
        return overflow if (@queued_bytes += data.bytesize) > @context.config.websocket_max_pending
        (@queued ||= []) << data
        @ended.signal
        true
      end

      # See Client#close: the stream ends (END_STREAM) once {#run} has sent what other threads
      # handed over before and returns. From another thread the close is handed to the reactor
      # thread's mailbox, behind that thread's writes.
      # @return [void]
      def close
        return @mailbox.post(self, :close) unless Thread.current.equal?(@thread)
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

      # @return [Integer] writes handed over from other threads and not yet sent (a write from
      #   the reactor thread waits for the window instead of queueing), -1 once closed.
      def pending
        return -1 unless open?
        @queued ? @queued.size : 0
      end

      private

      # Sends the queued writes in order, in the stream's fiber (each waits for the window).
      def send_queued
        while (data = @queued&.shift)
          @queued_bytes -= data.bytesize
          break unless transmit(@codec.message(data))
        end
        @queued = nil
        @queued_bytes = 0
      end

      # @return [Boolean] false when the stream is closed (or closes for it).
      def transmit(bytes)
        return false if @stream.closed?
        @send.call(bytes)
        true
      rescue IOError, SystemCallError, Heron::TimeoutError, Protocol::HTTP2::Error # EOFError is an IOError
        close
        false
      end

      def overflow
        @context.logger.warn("closing #{@client.env['PATH_INFO']}: the client does not read " \
                             "(#{@queued_bytes} bytes handed over, websocket_max_pending #{@context.config.websocket_max_pending})")
        @queued = nil
        close
        false
      end

      def callback(name)
        close unless run_callback(name)
      end
    end
  end
end
