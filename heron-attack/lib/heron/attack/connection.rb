# frozen_string_literal: true

require "socket"
require "openssl"
require "ipaddr"
require_relative "response_reader"
require_relative "protocol_error"

module Heron
  module Attack
    # One client TCP connection (TLS for https:// targets) with a read buffer. Every call yields
    # to the fiber scheduler while it waits, so many connections share one reactor thread. Reads
    # land in a scratch string that the connections of one {Client} share (a read never waits
    # while holding it), so a connection costs the bytes it has buffered rather than a 64 KiB
    # read buffer of its own (2,500 connections made 160 MB of those, counted by Ruby's malloc
    # limits, which set off major collections).
    class Connection
      READ_SIZE = 64 * 1024
      MAX_HEAD = 64 * 1024

      # @return [Integer] how many responses this connection has read.
      attr_reader :uses

      # Connects (and runs the TLS handshake when given a context) without blocking the reactor.
      # @param addrinfo [Addrinfo] the resolved server address.
      # @param tls [OpenSSL::SSL::SSLContext, nil] speak TLS with this context.
      # @param host [String, nil] the URL's host: sent as SNI (unless an IP address) and checked
      #   against the certificate when the context verifies.
      # @param scratch [String, nil] the shared read scratch (see {#initialize}).
      # @return [Connection]
      # @raise [SystemCallError] e.g. Errno::ECONNREFUSED.
      # @raise [OpenSSL::SSL::SSLError] when the handshake or the certificate check fails.
      def self.open(addrinfo, tls: nil, host: nil, scratch: nil)
        socket = Socket.new(addrinfo.afamily, Socket::SOCK_STREAM)
        connect(socket, addrinfo.to_sockaddr)
        socket.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, 1)
        new(tls ? handshake(socket, tls, host) : socket, scratch)
      rescue StandardError
        socket&.close
        raise
      end

      # @api private
      # Wraps a connected socket in TLS and runs the client handshake, waiting under the fiber
      # scheduler.
      # @param socket [Socket] @param context [OpenSSL::SSL::SSLContext] @param host [String, nil]
      # @return [OpenSSL::SSL::SSLSocket] closing it closes the socket.
      # @raise [OpenSSL::SSL::SSLError]
      def self.handshake(socket, context, host)
        ssl = OpenSSL::SSL::SSLSocket.new(socket, context)
        ssl.sync_close = true
        ssl.hostname = host if host && !ip_address?(host)
        until (state = ssl.connect_nonblock(exception: false)).equal?(ssl)
          state == :wait_readable ? socket.wait_readable : socket.wait_writable
        end
        ssl.post_connection_check(host) if host && context.verify_mode != OpenSSL::SSL::VERIFY_NONE
        ssl
      end

      # @api private
      # @param host [String] @return [Boolean] whether host is an IPv4 or IPv6 literal.
      def self.ip_address?(host)
        IPAddr.new(host.delete("[]"))
        true
      rescue IPAddr::Error
        false
      end

      # @api private
      # Connects a non-blocking socket, waiting for writability under the fiber scheduler.
      # @param socket [Socket] @param sockaddr [String] a packed address.
      # @return [void]
      # @raise [SystemCallError] e.g. Errno::ECONNREFUSED.
      def self.connect(socket, sockaddr)
        return if socket.connect_nonblock(sockaddr, exception: false) == 0
        socket.wait_writable
        socket.connect_nonblock(sockaddr)
      rescue Errno::EISCONN
        nil
      end

      # @param socket [Socket, OpenSSL::SSL::SSLSocket] a connected socket.
      # @param scratch [String, nil] where reads land before they are appended to this
      #   connection's buffer; connections in one thread may share it. nil makes one of its own.
      def initialize(socket, scratch = nil)
        @socket = socket
        @buffer = String.new(encoding: Encoding::BINARY)
        @scratch = scratch || String.new(encoding: Encoding::BINARY)
        @offset = 0
        @uses = 0
      end

      # Sends a request and reads its response.
      # @param bytes [String] the whole request.
      # @param head [Boolean] whether the response has no body (HEAD request).
      # @return [Response]
      def exchange(bytes, head: false)
        transmit(bytes)
        response = ResponseReader.new(self).read(head: head)
        @uses += 1
        response
      end

      # @return [String] the next response head: everything up to the blank line, without the
      #   final CRLF CRLF (one search and one string per response instead of one per line).
      # @raise [EOFError] when the peer closes first.
      # @raise [ProtocolError] when no blank line comes within {MAX_HEAD} bytes.
      def read_head
        until (at = @buffer.index("\r\n\r\n", @offset))
          raise ProtocolError, "response head larger than #{MAX_HEAD} bytes" if buffered > MAX_HEAD
          fill
        end
        head = @buffer.byteslice(@offset, at - @offset)
        @offset = at + 4
        head
      end

      # @return [String] the next CRLF-terminated line, without the CRLF.
      # @raise [EOFError] when the peer closes first.
      def read_line
        fill until (at = @buffer.index("\r\n", @offset))
        line = @buffer.byteslice(@offset, at - @offset)
        @offset = at + 2
        line
      end

      # Reads and drops exactly n bytes.
      # @param n [Integer]
      # @return [Integer] n.
      def skip(n)
        left = n
        while left.positive?
          fill if buffered.zero?
          taken = [left, buffered].min
          @offset += taken
          left -= taken
        end
        n
      end

      # Reads and drops everything until the peer closes.
      # @return [Integer] how many bytes were dropped.
      def skip_to_eof
        total = buffered
        @offset = @buffer.bytesize
        loop { total += receive.bytesize }
      rescue EOFError
        total
      end

      # @return [void]
      def close
        @socket.close unless @socket.closed?
      end

      private

      def buffered
        @buffer.bytesize - @offset
      end

      # Writes every byte, waiting under the fiber scheduler only when the socket is full: a
      # request usually goes out in one write_nonblock, without the scheduler's write hook (an
      # IO::Buffer and a trip through Async per request).
      def transmit(bytes)
        until (written = @socket.write_nonblock(bytes, exception: false)) == bytes.bytesize
          next wait(written) if written.is_a?(Symbol)
          bytes = bytes.byteslice(written, bytes.bytesize - written)
        end
      end

      # Waits for what a non-blocking call asked for (:wait_readable or :wait_writable; TLS can
      # ask for either on a read or a write).
      def wait(what)
        what == :wait_readable ? @socket.to_io.wait_readable : @socket.to_io.wait_writable
      end

      # Appends what the socket has, first dropping what was already consumed.
      def fill
        @buffer = @buffer.byteslice(@offset, buffered) if @offset.positive?
        @offset = 0
        @buffer << receive
      end

      # Reads what the socket has, waiting (without the shared scratch) until it has something.
      # A TLS peer that closes without close_notify (many servers closing an idle keep-alive
      # connection) makes OpenSSL 3 raise "unexpected eof": that is the end of the stream here
      # too, so a reused connection is retried as after a plain EOF (responses are framed by
      # length or chunks, so a cut response still shows as one).
      def receive
        loop do
          data = @socket.read_nonblock(READ_SIZE, @scratch, exception: false)
          raise EOFError, "end of file reached" if data.nil?
          return data unless data.is_a?(Symbol)
          wait(data)
        end
      rescue OpenSSL::SSL::SSLError => e
        raise unless e.message.include?("unexpected eof")
        raise EOFError, e.message
      end
    end
  end
end
