# frozen_string_literal: true

require_relative "../timeout_error"
require_relative "../clock"

module Heron
  class Connection
    # A non-blocking socket with a read buffer and per-call deadlines. Every wait goes through
    # `wait_readable` / `wait_writable`, so under the fiber scheduler it yields to other connections.
    class BufferedSocket
      READ_SIZE = 16 * 1024
      # Most bytes {#append_to} reads at once: a whole body is being read, so fewer, larger reads.
      APPEND_SIZE = 64 * 1024
      # Most room the read buffer keeps once emptied (Connection::ReadBuffer): a kept-alive
      # connection's next head is read into the memory its last one used, with no malloc and no
      # free per request; a buffer that grew past this (a large head, a prebuffered body) gives
      # its memory back when emptied, as does a connection that parks ({#release_room}).
      KEEP_ROOM = 1024

      # @return [Socket] the underlying socket.
      attr_reader :io

      # @return [String] the bytes received and not yet consumed (binary), one String for the
      #   connection's life: C readers (HTTP2::FrameReader) take what they parse off its front.
      attr_reader :buffer

      # @return [String] a read buffer that connections of one thread can share: its bytes are
      #   copied into {#buffer} before the fiber can switch.
      def self.scratch_buffer
        String.new(capacity: READ_SIZE, encoding: Encoding::BINARY)
      end

      # @param io [BasicSocket] a connected socket.
      # @param scratch [String] the read buffer, shared by the connections of one reactor thread so
      #   an idle connection holds no 16 KiB buffer of its own.
      def initialize(io, scratch = Connection::BufferedSocket.scratch_buffer)
        @io = io
        @buffer = String.new(encoding: Encoding::BINARY)
        @chunk = scratch
      end

      # Runs the TLS handshake when the socket is a TLS server socket that has not had it yet (it
      # responds to `accept_nonblock`); a plain socket returns at once.
      # @param timeout [Numeric] seconds the whole handshake may take.
      # @return [Boolean] whether the connection is ready for requests (false: the handshake failed
      #   or timed out; the caller closes).
      def handshake(timeout)
        return true unless @io.respond_to?(:accept_nonblock)
        deadline = Clock.now + timeout
        until (state = @io.accept_nonblock(exception: false)).equal?(@io)
          return false unless wait(state, deadline - Clock.now)
        end
        true
      rescue StandardError # OpenSSL::SSL::SSLError, a reset: nothing to answer over a broken handshake
        false
      end

      # Reads whatever is available (waiting up to `timeout`) and appends it to {#buffer}.
      # @param timeout [Numeric, nil] seconds to wait for the first byte; nil waits forever.
      # @return [Integer, nil] bytes appended, or nil at end of stream.
      # @raise [Heron::TimeoutError] when nothing arrives in time.
      def fill(timeout)
        data = receive(READ_SIZE, timeout) or return nil
        @buffer << data
        data.bytesize
      end

      # Reads what the socket has (up to `max` bytes, waiting up to `timeout`) and decodes it as
      # chunked body data straight into `out` (see HTTPParser#filter_body), without copying it into
      # {#buffer} first; only bytes after the body's end (a pipelined request) are kept there. For
      # when nothing is buffered.
      # @param parser [HTTPParser] the parser of the request whose body this is.
      # @param out [String] receives the decoded data.
      # @param max [Integer]
      # @param timeout [Numeric, nil]
      # @return [Integer, nil] bytes read from the socket, or nil at end of stream.
      # @raise [Heron::TimeoutError] when nothing arrives in time.
      def fill_decoded(parser, out, max, timeout)
        data = receive(max < READ_SIZE ? max : READ_SIZE, timeout) or return nil
        count = data.bytesize
        parser.filter_body(out, data)
        @buffer << data unless data.empty?
        count
      end

      # Appends what the socket has right now (for a TLS socket: what OpenSSL can decrypt of it) to
      # {#buffer}, never waiting.
      # @return [Integer, Symbol, nil] bytes appended; :wait_readable when nothing is there yet
      #   (:wait_writable when a TLS socket must write first); nil at end of stream.
      def fill_now
        data = @io.read_nonblock(READ_SIZE, @chunk, exception: false)
        return data unless data.is_a?(String)
        @buffer << data
        data.bytesize
      rescue Errno::ECONNRESET, Errno::EPIPE, IOError
        nil
      rescue StandardError => e
        raise unless tls_error?(e)
        nil
      end

      # @return [Boolean] whether the socket is a plain one, whose readiness the kernel reports
      #   exactly (a TLS socket may hold decrypted bytes inside OpenSSL), so the connection may
      #   wait for its next bytes parked, without a fiber (see Server::ParkingLot).
      def parkable? = @io.is_a?(BasicSocket)

      # Reads up to `max` bytes into `out`, replacing its contents and reusing its memory (so a
      # caller that passes the same String each time allocates nothing per read): buffered bytes
      # first, else straight from the socket, waiting up to `timeout` for them.
      # @param max [Integer]
      # @param out [String] becomes binary.
      # @param timeout [Numeric, nil]
      # @return [String, nil] out, or nil at end of stream.
      # @raise [Heron::TimeoutError] when nothing arrives in time.
      def read_into(max, out, timeout)
        out.force_encoding(Encoding::BINARY)
        return take_into(max, out) unless @buffer.empty?
        read_waiting(max, out, timeout)
      end

      # Appends up to `max` bytes to `out`: buffered bytes first, else what the socket has, read
      # through the thread's read buffer (waiting up to `timeout` for it). `out` keeps its memory,
      # so a String made with the capacity of a whole body is filled without a reallocation or a
      # String per read.
      # @param out [String] binary.
      # @param max [Integer]
      # @param timeout [Numeric, nil]
      # @return [Integer, nil] bytes appended, or nil at end of stream.
      # @raise [Heron::TimeoutError] when nothing arrives in time.
      def append_to(out, max, timeout)
        return append_buffered(out, max) unless @buffer.empty?
        read_into([max, APPEND_SIZE].min, @chunk, timeout) or return nil
        out << @chunk
        @chunk.bytesize
      end

      # @return [Boolean] whether received bytes are waiting to be consumed.
      def buffered? = !@buffer.empty?

      # @return [Integer] how many received bytes are waiting to be consumed.
      def buffered_bytes = @buffer.bytesize

      # @param length [Integer]
      # @return [String] a copy of up to `length` bytes from the front of the buffer (not consumed).
      def peek(length) = @buffer.byteslice(0, length)

      # Parses a request head from the buffered bytes (see HTTPParser#parse).
      # @param parser [HTTPParser]
      # @param env [Hash] filled with the head's fields.
      # @return [Integer, nil] the head's length, nil while it is incomplete.
      def parse_head(parser, env) = parser.parse(env, @buffer)

      # Moves decoded chunked-body data from the buffer into `out`, leaving what follows the body
      # (see HTTPParser#filter_body).
      # @param parser [HTTPParser] the parser of the request whose body this is.
      # @param out [String] receives the data.
      # @return [Boolean] whether the body's last chunk was decoded.
      def decode_chunked(parser, out) = parser.filter_body(out, @buffer)

      # Drops `length` bytes from the front of the buffer (a parsed head, whose fields the parser
      # already copied), in place: unlike {#consume}, no String is made of them, and the buffer
      # keeps its memory for the next request (up to KEEP_ROOM).
      # @param length [Integer]
      # @return [void]
      def skip(length)
        drop_front(length)
      end

      # Gives back the memory an empty read buffer kept (see KEEP_ROOM): the connection parks
      # between requests, holding no more than an empty String.
      # @return [void]
      def release_room
        Connection::ReadBuffer.drop_front(@buffer, 0, 0)
      end

      # Removes and returns up to `length` bytes from the front of the buffer, moving what is left
      # down in place: taking a large buffer (a prebuffered body) apart in small pieces allocates
      # each piece once, where `slice!` also copied all that was left on every call.
      # @param length [Integer]
      # @return [String]
      def consume(length)
        if length < @buffer.bytesize
          data = @buffer.byteslice(0, length)
          drop_front(length)
          return data
        end
        data = @buffer.dup
        @buffer.clear
        data
      end

      # Writes all of `data`, waiting for the peer up to `timeout` seconds at a time. What the
      # socket does not take at once is copied before the first wait: `data` may be a buffer
      # other connections of the thread write into meanwhile (Response::Writer's heads).
      # @param data [String]
      # @param timeout [Numeric, nil]
      # @return [Integer] bytes written.
      # @raise [Heron::TimeoutError, Errno::EPIPE, Errno::ECONNRESET] when the peer stops reading or goes away.
      def write(data, timeout)
        total = data.bytesize
        written = @io.write_nonblock(data, exception: false)
        return total if written == total
        write_rest(data, written, timeout)
        total
      rescue StandardError => e
        raise unless tls_error?(e)
        raise IOError, e.message # callers treat a TLS failure as the peer going away
      end

      # @return [Boolean] whether the socket is closed.
      def closed?
        @io.closed?
      end

      # Closes after a response that left request bytes unread: shuts down the sending side so the
      # response is delivered, then reads and drops what the client still sends (bounded), so the
      # kernel does not reset the connection and destroy the response before the client reads it.
      # @param timeout [Numeric] longest time to keep draining.
      # @param max [Integer] most bytes to drain.
      def linger_close(timeout: 1.0, max: 256 * 1024)
        @io.to_io.shutdown(Socket::SHUT_WR)
        deadline = Clock.now + timeout
        drained = 0
        while drained < max && (left = deadline - Clock.now) > 0
          break unless (count = fill(left))
          drained += count
          @buffer.clear
        end
      rescue Heron::TimeoutError, SystemCallError, IOError
        nil
      ensure
        close
      end

      # Starts a close like {#linger_close} that does not wait: shuts down the sending side, so the
      # response is delivered; the caller then calls {#drain_now} whenever the socket is readable
      # (a parked connection, see Server::ParkingLot) and closes when its time is up.
      # @return [Boolean] false when the peer is gone already (the socket is closed then).
      def shut_write
        @io.shutdown(Socket::SHUT_WR)
        true
      rescue SystemCallError, IOError
        close
        false
      end

      # Reads and drops what the client has sent, up to `max` bytes, never waiting (see {#shut_write}).
      # @param max [Integer]
      # @return [Integer, nil] bytes dropped (0: nothing there yet), or nil at end of stream.
      def drain_now(max)
        dropped = 0
        while dropped < max
          data = @io.read_nonblock(READ_SIZE, @chunk, exception: false)
          return (data.nil? ? nil : dropped) unless data.is_a?(String) # :wait_readable, or the end
          dropped += data.bytesize
        end
        dropped
      rescue SystemCallError, IOError
        nil
      end

      # Closes the socket, ignoring errors from a peer that already went away.
      def close
        @io.close unless @io.closed?
      rescue IOError, SystemCallError
        nil
      end

      private

      def tls_error?(error) = defined?(OpenSSL::SSL::SSLError) && error.is_a?(OpenSSL::SSL::SSLError)

      # Copies up to `max` buffered bytes into `out`'s own memory and drops them from the buffer:
      # no String is made for them and `out` shares none (a shared String keeps the whole block it
      # points into alive until the GC sweeps, 64 KiB or more per prebuffered upload).
      def take_into(max, out)
        out[0, out.bytesize] = @buffer # a splice copies into out's memory
        out[max, out.bytesize - max] = "" if out.bytesize > max # truncates in place
        drop_front(out.bytesize)
        out
      end

      # Drops the first `n` bytes of the buffer in place (Connection::ReadBuffer: the rest moves
      # down within the buffer's memory; `[0, n] = ""` and `slice!` leave the buffer pointing into
      # a shared block that the next change copies).
      def drop_front(n)
        Connection::ReadBuffer.drop_front(@buffer, n, KEEP_ROOM)
      end

      # Reads up to `max` bytes into the thread's read buffer.
      # @return [String, nil] the read buffer, or nil at end of stream or when the peer went away.
      def receive(max, timeout) = read_waiting(max, @chunk, timeout)

      # Reads up to `max` bytes into `out`, waiting for the socket as often as it asks. A peer
      # gone (a reset, or a TLS client that closed without close_notify: OpenSSL's "SSL_read:
      # unexpected eof") is the end of the stream, whoever reads: the connection's head reads and
      # the app's body reads alike, so a client's abort never surfaces as an app error.
      # A `while`, not `loop { }` (here and in #write_rest): a block called from C puts one more
      # VM entry on the machine stack of the fiber that waits in it, and every minor GC scans the
      # stack of every waiting fiber (fibers are not write-barrier protected): about 1 µs per
      # waiting connection per collection (bench/results/per_core.md, "GC and waiting fibers").
      # @return [String, nil] out, or nil at end of stream.
      def read_waiting(max, out, timeout)
        # Not a `case`: `when :wait_readable` on a String subject hashes all of it (about a third
        # of the server's user CPU in a 1 GB upload read 16 KiB at a time).
        while (state = @io.read_nonblock(max, out, exception: false)).is_a?(Symbol)
          wait(state, timeout) or raise Heron::TimeoutError, "read timed out"
        end
        state
      rescue Errno::ECONNRESET, Errno::EPIPE, IOError
        nil
      rescue StandardError => e
        raise unless tls_error?(e)
        nil
      end

      # Waits for what a non-blocking call asked for (:wait_readable or :wait_writable).
      def wait(state, timeout)
        return false if timeout && timeout <= 0
        state == :wait_readable ? @io.wait_readable(timeout) : @io.wait_writable(timeout)
      end

      def append_buffered(out, max)
        taken = consume(max)
        out << taken
        taken.bytesize
      end

      # The rest of `data` after `written` bytes (a Symbol: none of them went) is written from a
      # copy (see #write), which shares the bytes until `data` is changed.
      def write_rest(data, written, timeout)
        data = data.byteslice(0, data.bytesize)
        while written.is_a?(Symbol) || written < data.bytesize
          if written.is_a?(Symbol) # :wait_writable, or :wait_readable while TLS reads a record
            wait(written, timeout) or raise Heron::TimeoutError, "write timed out"
          else
            data = data.byteslice(written, data.bytesize - written)
          end
          written = @io.write_nonblock(data, exception: false)
        end
      end
    end
  end
end
