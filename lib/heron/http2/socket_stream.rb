# frozen_string_literal: true

require_relative "../timeout_error"
require_relative "../clock"

module Heron
  module HTTP2
    # The byte stream protocol-http2's framer reads and writes, over the connection's
    # Connection::BufferedSocket (so bytes a client sent with its preface are not lost). Writes
    # are gathered until #flush (Session flushes after each frame or batch of frames, under its
    # write lock): a frame's header and payload, and a response's HEADERS and DATA, leave in one
    # system call rather than one per piece.
    class SocketStream
      include Clock

      # @param socket [Connection::BufferedSocket]
      # @param write_timeout [Numeric] seconds a write may wait for the client.
      # @param read_timeout [#call] returns the seconds a read may wait now (nil: no limit).
      # @param header_timeout [Numeric] seconds a whole header block may take (see #head).
      # @param idle_wait [#call, nil] given the socket, waits for its next bytes with no scheduler
      #   timer (Connection#idle_wait): what BufferedSocket#fill gives, or false when nothing came
      #   (or the connection is not idle), after which the read waits on within its timeout's rest.
      def initialize(socket, write_timeout:, read_timeout:, header_timeout:, idle_wait: nil)
        @socket = socket
        @write_timeout = write_timeout
        @read_timeout = read_timeout
        @header_timeout = header_timeout
        @idle_wait = idle_wait
        @deadline = nil
        @out = String.new(encoding: Encoding::BINARY)
        @spare = String.new(encoding: Encoding::BINARY) # the two take turns: no String per flush
      end

      # Runs the block's reads against one deadline, as HTTP/1.1 reads a request head: a header
      # block (HEADERS and its CONTINUATION frames) or the connection preface may not be dripped
      # a byte at a time, each within the per-read timeout, for ever.
      # @param deadline [Float] monotonic time; `header_timeout` from now unless given.
      # @raise [Heron::TimeoutError] once it passes.
      def head(deadline = now + @header_timeout)
        outer = @deadline
        @deadline = outer && outer < deadline ? outer : deadline
        yield
      ensure
        @deadline = outer
      end

      # @param length [Integer]
      # @return [String] exactly `length` bytes.
      # @raise [EOFError] when the client closes first; Heron::TimeoutError.
      def read(length)
        receive while @socket.buffered_bytes < length
        @socket.consume(length)
      end

      # Waits for the client's next bytes and appends them to {#buffer}.
      # @return [void]
      # @raise [EOFError] when the client closes first; Heron::TimeoutError.
      def receive
        @reader&.waiting
        fill or raise EOFError, "client closed"
        @reader&.working
      end

      # @return [String] the bytes received and not yet read (Connection::BufferedSocket#buffer),
      #   for a reader that consumes them in place (FrameReader).
      def buffer = @socket.buffer

      # @return [#waiting, #working, nil] told when the reads wait for the client, and when they
      #   have bytes to work through again (Session: writes meanwhile are sent together).
      attr_accessor :reader

      # Adds bytes to what the next #flush sends.
      # @param data [String]
      # @return [Integer]
      def write(data)
        @out << (data.encoding == Encoding::BINARY || data.ascii_only? ? data : data.b)
        data.bytesize
      end

      # Same as #write, returning self.
      # @param data [String]
      # @return [SocketStream]
      def <<(data)
        write(data)
        self
      end

      # Adds a response's frames to what the next #flush sends, packed straight into the output
      # by the connection's HPACK encoder (Encoder#frames, one C call): HEADERS (CONTINUATION
      # past max_frame_size) and, given data, one DATA frame; flags on the last.
      # @param encoder [Encoder]
      # @param id [Integer] the stream's id.
      # @param fields [Array<Array(String, String)>]
      # @param flags [Integer] END_STREAM or 0.
      # @param max_frame_size [Integer] the peer's SETTINGS_MAX_FRAME_SIZE.
      # @param table_size [Integer] the peer's SETTINGS_HEADER_TABLE_SIZE.
      # @param data [String, nil] within the windows and the frame size (the caller's care).
      # @return [SocketStream]
      def frames(encoder, id, fields, flags, max_frame_size, table_size, data = nil) # rubocop:disable Metrics/ParameterLists -- the frames' header fields, one C call
        encoder.frames(@out, id, fields, flags, max_frame_size, table_size, data)
        self
      end

      # @return [Integer] bytes received and not yet read.
      def buffered_bytes = @socket.buffered_bytes

      # @return [Integer] bytes written and not yet sent.
      def pending = @out.bytesize

      # Sends what was written since the last flush. A client that takes no bytes for
      # `write_timeout` loses the connection, as over HTTP/1.1: a frame may be half written, so
      # nothing more can go out on it, and every stream ends.
      # @return [void]
      # @raise [Heron::TimeoutError] after closing the socket.
      def flush
        return if @out.empty?
        data = @out
        @out = @spare
        begin
          @socket.write(data, @write_timeout)
        ensure
          @spare = data.clear
        end
      rescue Heron::TimeoutError
        @socket.close
        raise
      end

      # Closes after draining what the client still sends (bounded), so a GOAWAY just written is
      # not destroyed by a reset before the client reads it.
      # @return [void]
      def close = @socket.linger_close

      # @return [Boolean]
      def closed? = @socket.closed?

      private

      # Waits for the client's next bytes: first in the idle wait, outside a header block, then
      # for what is left of the read timeout.
      def fill
        return @socket.fill(wait) unless @idle_wait && @deadline.nil?
        started = now
        ready = @idle_wait.call(@socket)
        return ready unless ready == false
        limit = wait
        @socket.fill(limit && limit - (now - started))
      end

      # Seconds the next read may wait: the read timeout, within the header deadline if one runs.
      def wait
        limit = @read_timeout.call
        return limit unless @deadline
        left = @deadline - now
        raise Heron::TimeoutError, "header block timed out" if left <= 0
        limit && limit < left ? limit : left
      end
    end
  end
end
