# frozen_string_literal: true

require "delegate"
require "openssl"
require "socket"

module Heron
  module TLS
    # A TCP listener whose accepted sockets speak TLS: everything a listener does is the TCP
    # server's, except that {#accept_nonblock} hands out an OpenSSL::SSL::SSLSocket whose handshake
    # has not run yet. The connection's own fiber runs it (Connection::BufferedSocket#handshake),
    # so a client that never completes it holds up no one else.
    class Listener < SimpleDelegator
      # @return [Context] the bind's TLS settings.
      attr_reader :context

      # @param server [TCPServer] the listening socket.
      # @param context [Context]
      def initialize(server, context)
        super(server)
        @context = context
      end

      # @param exception [Boolean] as TCPServer#accept_nonblock.
      # @return [OpenSSL::SSL::SSLSocket, Symbol] a socket awaiting its handshake, or :wait_readable.
      def accept_nonblock(exception: true)
        tcp = __getobj__.accept_nonblock(exception: exception)
        return tcp if tcp == :wait_readable
        tcp.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, 1)
        OpenSSL::SSL::SSLSocket.new(tcp, @context.ssl_context).tap { |ssl| ssl.sync_close = true }
      end

      # @return [String] "https".
      def scheme = "https"

      # Re-reads the certificate files (see {Context#reload}).
      # @return [void]
      def reload = @context.reload
    end
  end
end
