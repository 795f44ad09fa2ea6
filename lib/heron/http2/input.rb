# frozen_string_literal: true

require "async/notification"
require "stringio"
require_relative "../request/input"
require_relative "../request/full_read"
require_relative "../request/body_spool"
require_relative "../timeout_error"

module Heron
  module HTTP2
    # `rack.input` of one HTTP/2 stream: DATA frames are pushed in by the connection's reading
    # fiber and read by the app's. The stream's flow-control window is given back only as the
    # app reads, so a client can have at most one window (64 KiB) buffered per stream.
    #
    # The first buffered chunk is consumed from an offset (no copy of its rest per read), and
    # `read(n, buffer)` copies straight into the caller's String through one reused StringIO, so
    # an app reading that way makes no String per read (the DATA frames' own Strings are the
    # framing library's). No GC pacing as in Request::GCPacer: 100 MiB uploads over HTTP/2 read with
    # read(16384), read(16384, buffer) or each raised a server's peak RSS by 0-13 MiB without it
    # (the frames' many small objects keep minor GCs, and their sweeps, frequent).
    #
    # A whole-body read (`read` with no length) under `body_memory_limit` goes as over HTTP/1.1
    # (Request::Input): the frames are taken into a Request::BodySpool (a Tempfile past the
    # budget's threshold) as they arrive, reopening the window as they go, then the read waits
    # in the reactor thread's Server::BodyBudget until the body fits, and the body counts there
    # until the Exchange has written the response (Exchange#release_input), as over HTTP/1.1.
    class Input
      include Request::FullRead

      EMPTY = "".b.freeze
      private_constant :EMPTY

      # @param limit [Integer, nil] the most body bytes accepted (max_body_size).
      # @param timeout [Numeric] seconds a read waits for the next bytes.
      # @param consumed [#call] told how many bytes the app took (to reopen the window).
      # @param budget [Server::BodyBudget, nil] the thread's body memory (`body_memory_limit`).
      def initialize(limit:, timeout:, consumed:, budget: nil)
        @chunks = []
        @offset = 0
        @limit = limit
        @timeout = timeout
        @consumed = consumed
        @budget = budget
        @received = 0
        @done = false
      end

      # Adds a DATA frame's bytes (the connection's fiber).
      # @param data [String]
      # @raise [Request::Input::TooLarge] past the limit.
      def push(data)
        @received += data.bytesize
        return @consumed.call(data.bytesize) if @discarding
        raise Request::Input::TooLarge, "request body exceeds #{@limit} bytes" if @limit && @received > @limit
        @chunks << (data.frozen? ? data.dup : data).force_encoding(Encoding::BINARY) unless data.empty?
        @arrived&.signal
      end

      # Marks the end of the body (END_STREAM), or its loss (`error`: the stream was reset).
      # @param error [Exception, nil]
      def finish(error = nil)
        @error ||= error
        @done = true
        @arrived&.signal
      end

      # What has arrived of the body, without waiting for `length` bytes (see
      # Request::FullRead#read): all of the rest when `length` is nil, else at least one byte and
      # at most `length`.
      # @param length [Integer, nil]
      # @param buffer [String, nil] filled with the result when given (its memory reused).
      # @return [String, nil] binary data; nil at the end of the body when a positive length was asked.
      def read_part(length = nil, buffer = nil)
        return read_into(length, buffer) if buffer && length&.positive?
        data = length ? read_some(length) : read_all
        return data unless buffer
        data.nil? ? buffer.clear && nil : buffer.replace(data)
      end

      # @return [String, nil] the next line, or nil at the end.
      def gets
        line = +"".b
        while (chunk = next_chunk)
          index = chunk.index("\n", @offset)
          next line << take(chunk.bytesize - @offset) unless index
          return line << take(index + 1 - @offset)
        end
        line.empty? ? nil : line
      end

      # Yields the body in chunks as they arrive.
      def each
        while (chunk = next_chunk)
          yield take(chunk.bytesize - @offset)
        end
      end

      # Does nothing: the stream owns the body.
      def close = nil

      # Counts `bytes` of body the app holds against the thread's body memory, waiting for room
      # (see Server::BodyBudget), until {#release}. Nothing without a budget or at or under its
      # threshold. Bytes counted after {#release} (a read in an after-reply callback) are given
      # back at once: nothing would release them later.
      # @param bytes [Integer]
      # @return [void]
      def hold(bytes)
        return unless @budget && bytes > @budget.threshold
        @held = (@held || 0) + @budget.acquire(bytes)
        release if @released
      end

      # Gives back what {#hold} counted; the exchange calls it once the response is written.
      # @return [void]
      def release
        @released = true
        return unless @held
        @budget.release(@held)
        @held = nil
      end

      # @return [Boolean] whether the whole body was read.
      def finished? = @done && @chunks.empty?

      # Drops what is buffered and what comes later (the response is out and the app is done
      # with the body), giving its window back as a read would.
      # @return [void]
      def discard
        @discarding = true
        @consumed.call(@chunks.sum(&:bytesize) - @offset)
        @chunks.clear
        @offset = 0
      end

      private

      # Copies up to `length` bytes of the first chunk into `buffer` (StringIO#read(n, buffer)
      # resizes and fills it in place).
      def read_into(length, buffer)
        chunk = next_chunk or return buffer.clear && nil
        reader = (@reader ||= StringIO.new("".b))
        reader.string = chunk
        reader.pos = @offset
        reader.read(length, buffer)
        reader.string = EMPTY
        advance(chunk, buffer.bytesize)
        buffer
      end

      def read_some(length)
        return "".b if length.zero?
        chunk = next_chunk or return nil
        take([length, chunk.bytesize - @offset].min)
      end

      def read_all
        return spooled_all if @budget
        data = +"".b
        data << take(@chunks.first.bytesize - @offset) while next_chunk
        data
      end

      # The body read whole while body memory is limited: received into a spool as it arrives
      # (memory stays flat however many streams do it at once), then read into one String once
      # the budget has room for it.
      def spooled_all
        spool = Request::BodySpool.new(@budget.threshold)
        while next_chunk
          data = take(@chunks.first.bytesize - @offset)
          spool.write(data)
          data.clear # its memory back now, not at the next GC (the spool copied it)
        end
        hold(spool.size)
        spool.read
      ensure
        spool&.close
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
        # made on the first wait: most requests (a GET) have their whole body, or none, at once
        @arrived ||= Async::Notification.new
        Async::Task.current.with_timeout(@timeout) { @arrived.wait }
      rescue Async::TimeoutError
        raise Heron::TimeoutError, "request body timed out"
      end

      # @return [String] the next `length` bytes of the first chunk (all that is left of it at most).
      def take(length)
        chunk = @chunks.first
        data = @offset.zero? && length == chunk.bytesize ? chunk : chunk.byteslice(@offset, length)
        advance(chunk, length)
        data
      end

      # Moves past `length` bytes of the first chunk, dropping it when it is used up.
      def advance(chunk, length)
        @offset += length
        if @offset == chunk.bytesize
          @chunks.shift
          @offset = 0
        end
        @consumed.call(length)
      end
    end
  end
end
