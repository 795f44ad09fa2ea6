# frozen_string_literal: true

require_relative "../timeout_error"
require_relative "../clock"

module Heron
  class Connection
    # The minimum data rate a request body must keep. A limit on each wait alone (`body_timeout`)
    # lets a client that sends one byte just inside every wait hold its connection for ever; here
    # the time spent waiting for the body may not exceed `grace + received / min_rate` seconds.
    # Only time spent waiting on the socket counts, so an app that is slow to read costs the client
    # nothing. Each wait is still bounded by `body_timeout` too.
    class BodyPace
      include Clock

      # @param timeout [Numeric] the longest single wait (body_timeout).
      # @param min_rate [Integer] bytes per second; 0 turns the rate check off.
      # @param grace [Numeric] seconds of waiting allowed before any byte has to arrive.
      def initialize(timeout, min_rate, grace)
        @timeout = timeout
        @min_rate = min_rate
        @grace = grace
        @waited = 0.0
        @received = 0
      end

      # Waits for more body bytes and appends them to the socket's buffer.
      # @param socket [Connection::BufferedSocket]
      # @return [Integer, nil] bytes appended, or nil at end of stream.
      # @raise [Heron::TimeoutError] past either limit.
      def fill(socket)
        paced { |wait| socket.fill(wait) }
      end

      # Like {#fill}, but reads up to `max` body bytes straight into `out`
      # (see {Connection::BufferedSocket#read_into}).
      # @param socket [Connection::BufferedSocket]
      # @param max [Integer]
      # @param out [String]
      # @return [Integer, nil] bytes read, or nil at end of stream.
      # @raise [Heron::TimeoutError] past either limit.
      def read_into(socket, max, out)
        paced { |wait| socket.read_into(max, out, wait)&.bytesize }
      end

      # Like {#fill}, but appends up to `max` body bytes to `out`
      # (see {Connection::BufferedSocket#append_to}).
      # @param socket [Connection::BufferedSocket]
      # @param max [Integer]
      # @param out [String]
      # @return [Integer, nil] bytes appended, or nil at end of stream.
      # @raise [Heron::TimeoutError] past either limit.
      def append_to(socket, max, out)
        paced { |wait| socket.append_to(out, max, wait) }
      end

      # Like {#fill}, but decodes the chunked body bytes read straight into `out`
      # (see {Connection::BufferedSocket#fill_decoded}).
      # @param socket [Connection::BufferedSocket]
      # @param parser [HTTPParser]
      # @param out [String]
      # @param max [Integer]
      # @return [Integer, nil] bytes read, or nil at end of stream.
      # @raise [Heron::TimeoutError] past either limit.
      def fill_decoded(socket, parser, out, max)
        paced { |wait| socket.fill_decoded(parser, out, max, wait) }
      end

      # The longest the next wait may take.
      # @return [Numeric] seconds.
      # @raise [Heron::TimeoutError] when the rate allows no more waiting.
      def next_wait
        return @timeout unless @min_rate.positive?
        left = @grace + @received.fdiv(@min_rate) - @waited
        raise Heron::TimeoutError, "request body slower than #{@min_rate} bytes/s" if left <= 0
        left < @timeout ? left : @timeout
      end

      # Counts a wait done elsewhere: the body bytes a parked connection (one with no fiber,
      # see Server::ParkingLot) received and the time it waited for them.
      # @param seconds [Numeric]
      # @param bytes [Integer]
      # @return [void]
      def waited(seconds, bytes)
        @waited += seconds
        @received += bytes
      end

      private

      def paced
        wait = next_wait
        started = now
        count = yield(wait)
        @received += count if count
        count
      rescue Heron::TimeoutError
        raise if wait == @timeout
        raise Heron::TimeoutError, "request body slower than #{@min_rate} bytes/s"
      ensure
        @waited += now - started if started
      end
    end
  end
end
