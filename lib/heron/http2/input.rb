# frozen_string_literal: true

require "async/notification"
require_relative "../request/input"

module Heron
  module HTTP2
    # `rack.input` of one HTTP/2 stream: DATA frames are pushed in by the connection's reading
    # fiber and read by the app's. The stream's flow-control window is given back only as the
    # app reads, so a client can have at most one window (64 KiB) buffered per stream.
    class Input
      # @param limit [Integer, nil] the most body bytes accepted (max_body_size).
      # @param timeout [Numeric] seconds a read waits for the next bytes.
      # @param consumed [#call] told how many bytes the app took (to reopen the window).
      def initialize(limit:, timeout:, consumed:)
        @chunks = []
        @limit = limit
        @timeout = timeout
        @consumed = consumed
        @received = 0
        @done = false
        @arrived = Async::Notification.new
      end

      # Adds a DATA frame's bytes (the connection's fiber).
      # @param data [String]
      # @raise [Request::Input::TooLarge] past the limit.
      def push(data)
        @received += data.bytesize
        raise Request::Input::TooLarge, "request body exceeds #{@limit} bytes" if @limit && @received > @limit
        @chunks << (data.frozen? ? data.dup : data) unless data.empty?
        @arrived.signal
      end

      # Marks the end of the body (END_STREAM), or its loss (`error`: the stream was reset).
      # @param error [Exception, nil]
      def finish(error = nil)
        @error ||= error
        @done = true
        @arrived.signal
      end

      # Reads like IO#read.
      # @return [String, nil]
      def read(length = nil, buffer = nil)
        data = length ? read_some(length) : read_all
        return data unless buffer
        data.nil? ? buffer.clear && nil : buffer.replace(data)
      end

      # @return [String, nil] the next line, or nil at the end.
      def gets
        line = +"".b
        while (chunk = next_chunk)
          index = chunk.index("\n")
          next line << take(chunk.bytesize) unless index
          return line << take(index + 1)
        end
        line.empty? ? nil : line
      end

      # Yields the body in chunks as they arrive.
      def each
        while (chunk = next_chunk)
          yield take(chunk.bytesize)
        end
      end

      # Does nothing: the stream owns the body.
      def close = nil

      # @return [Boolean] whether the whole body was read.
      def finished? = @done && @chunks.empty?

      private

      def read_some(length)
        return "".b if length.zero?
        chunk = next_chunk or return nil
        take([length, chunk.bytesize].min)
      end

      def read_all
        data = +"".b
        data << take(@chunks.first.bytesize) while next_chunk
        data
      end

      # The first buffered chunk, waiting for one; nil at the end of the body.
      def next_chunk
        until (chunk = @chunks.first)
          raise @error if @error
          return nil if @done
          wait
        end
        chunk
      end

      def wait
        Async::Task.current.with_timeout(@timeout) { @arrived.wait }
      rescue Async::TimeoutError
        raise Connection::BufferedSocket::Timeout, "request body timed out"
      end

      def take(length)
        chunk = @chunks.first
        data = length == chunk.bytesize ? @chunks.shift : chunk.slice!(0, length)
        @consumed.call(data.bytesize)
        data
      end
    end
  end
end
