# frozen_string_literal: true

require "io/wait"
require_relative "protocol_error"

module Heron
  module Attack
    # The byte stream the framers of protocol-http2 and protocol-websocket read and write, over a
    # TCP or TLS socket. Reads come from a buffer filled 64 KiB at a time (IO#read would make a
    # system call for each frame header). Writes are gathered and sent by {#flush} under a lock,
    # so frames written by the fibers of several streams never interleave on the wire.
    class SocketStream
      READ_SIZE = 64 * 1024

      # @param socket [Socket, OpenSSL::SSL::SSLSocket] connected (and handshaken).
      def initialize(socket)
        @socket = socket
        @input = String.new(encoding: Encoding::BINARY)
        @offset = 0
        @output = String.new(encoding: Encoding::BINARY)
        @lock = Thread::Mutex.new
      end

      # @param limit [Integer] the most bytes the head may have.
      # @return [String] everything up to a blank line (CRLF CRLF, dropped): an HTTP/1.1 head.
      # @raise [EOFError] when the peer closes first.
      # @raise [ProtocolError] when no blank line comes within limit bytes.
      def read_head(limit)
        until (at = @input.index("\r\n\r\n", @offset))
          raise ProtocolError, "response head larger than #{limit} bytes" if @input.bytesize - @offset > limit
          fill
        end
        read(at - @offset).tap { @offset += 4 }
      end

      # Runs the block with its reads bounded: a header block and its CONTINUATION frames, which
      # protocol-http2 reads one inside the other without a limit.
      # @param bytes [Integer] the most bytes read in all. @param reads [Integer] the most reads.
      # @return [Object] the block's value.
      # @raise [ProtocolError] past either bound.
      def bounded(bytes, reads)
        @budget = [bytes, reads]
        yield
      ensure
        @budget = nil
      end

      # @param size [Integer]
      # @return [String] exactly size bytes.
      # @raise [EOFError] when the peer closes first.
      # @raise [ProtocolError] past the bounds of {#bounded}.
      def read(size)
        spend(size) if @budget
        fill while @input.bytesize - @offset < size
        data = @input.byteslice(@offset, size)
        @offset += size
        data
      end

      # Queues bytes for {#flush}.
      # @param data [String] @return [Integer] its size.
      def write(data)
        @output << data
        data.bytesize
      end

      # Sends everything queued, waiting under the fiber scheduler while the socket is full.
      # Bytes leave the queue only once written, so a timeout raised into a waiting fiber leaves
      # no frame half sent: the next flush sends the rest.
      # @return [void]
      def flush
        @lock.synchronize do
          until @output.empty?
            case (written = @socket.write_nonblock(@output, exception: false))
            when :wait_writable then @socket.to_io.wait_writable
            when :wait_readable then @socket.to_io.wait_readable
            else @output = @output.byteslice(written, @output.bytesize - written)
            end
          end
        end
      end

      # @return [void]
      def close
        @socket.close unless @socket.closed?
      end

      # @return [Boolean]
      def closed?
        @socket.closed?
      end

      private

      def spend(size)
        @budget[0] -= size
        @budget[1] -= 1
        raise ProtocolError, "a header block larger than #{@budget.inspect} allows" if @budget.any?(&:negative?)
      end

      def fill
        if @offset.positive?
          @input = @input.byteslice(@offset, @input.bytesize - @offset)
          @offset = 0
        end
        case (chunk = @socket.read_nonblock(READ_SIZE, exception: false))
        when :wait_readable then @socket.to_io.wait_readable
        when :wait_writable then @socket.to_io.wait_writable
        when nil then raise EOFError, "the server closed the connection"
        else @input << chunk
        end
      end
    end
  end
end
