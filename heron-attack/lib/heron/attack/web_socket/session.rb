# frozen_string_literal: true

require "socket"
require "base64"
require "securerandom"
require "digest/sha1"
require_relative "../connection"
require_relative "../socket_stream"
require_relative "../protocol_error"
require_relative "../version"

# protocol-websocket warns, when loaded on a Ruby without IO::Buffer#xor! (before 3.3), that it
# masks frames in Ruby; a load generator's messages are small, and the line would otherwise open
# every run's output. (Kernel#warn is silent while $VERBOSE is nil.)
begin
  verbose = $VERBOSE
  $VERBOSE = nil
  require "protocol/websocket/connection"
  require "protocol/websocket/framer"
ensure
  $VERBOSE = verbose
end
require_relative "framer"

module Heron
  module Attack
    module WebSocket
      # One client WebSocket connection: the HTTP/1.1 upgrade (RFC 6455 section 4), then
      # messages framed by protocol-websocket, masked as a client's must be.
      class Session
        GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
        MAX_HEAD = 64 * 1024
        # The least a received message may have; a larger message to send raises it to its size.
        MIN_MESSAGE_LIMIT = 64 * 1024

        # Connects (TLS for wss://) and upgrades.
        # @param addrinfo [Addrinfo] @param target [Target] the ws:// URL as http://, wss:// as https://.
        # @param tls [OpenSSL::SSL::SSLContext, nil] for wss://.
        # @param message [String] what will be sent: the server may send back as much (or
        #   {MIN_MESSAGE_LIMIT}), no more.
        # @return [Session]
        # @raise [ProtocolError] when the server does not switch protocols.
        # @raise [SystemCallError, OpenSSL::SSL::SSLError, EOFError]
        def self.open(addrinfo, target, tls:, message:)
          socket = Socket.new(addrinfo.afamily, Socket::SOCK_STREAM)
          Attack::Connection.connect(socket, addrinfo.to_sockaddr)
          socket.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, 1)
          socket = Attack::Connection.handshake(socket, tls, target.uri.hostname) if tls
          new(SocketStream.new(socket), [message.bytesize, MIN_MESSAGE_LIMIT].max).tap { |session| session.upgrade(target) }
        rescue StandardError
          socket&.close
          raise
        end

        # @param stream [SocketStream] @param limit [Integer] the most bytes a received message may have.
        def initialize(stream, limit)
          @stream = stream
          @connection = Protocol::WebSocket::Connection.new(Framer.new(stream, limit), mask: true)
        end

        # @api private
        # Sends the upgrade request and checks the 101 and its Sec-WebSocket-Accept.
        # @param target [Target] @return [void]
        # @raise [ProtocolError]
        def upgrade(target)
          key = Base64.strict_encode64(SecureRandom.bytes(16))
          @stream.write(request(target, key))
          @stream.flush
          head = @stream.read_head(MAX_HEAD)
          raise ProtocolError, "no WebSocket upgrade: #{head.lines.first.to_s.strip[0, 60].inspect}" unless head.match?(%r{\AHTTP/1\.1 101[ \r]})
          accept = head[/^sec-websocket-accept:[ \t]*(\S+)/i, 1]
          raise ProtocolError, "bad Sec-WebSocket-Accept #{accept.inspect}" unless accept == Digest::SHA1.base64digest(key + GUID)
        end

        # Sends one message: a text frame when it is valid UTF-8, a binary one otherwise.
        # @param message [String] @return [void]
        def transmit(message)
          text = message.dup.force_encoding(Encoding::UTF_8)
          text.valid_encoding? ? @connection.send_text(text) : @connection.send_binary(message)
          @connection.flush
        end

        # @return [String, nil] the next message (binary), nil once the server has closed.
        # @raise [EOFError, Protocol::WebSocket::Error]
        def receive
          @connection.read&.to_str&.b
        end

        # Sends a close frame and closes the socket.
        # @return [void]
        def close
          @connection.close
        rescue StandardError
          @stream.close
        end

        private

        def request(target, key)
          head = +"GET #{target.uri.request_uri} HTTP/1.1\r\nHost: #{target.authority_header}\r\n" \
                  "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: #{key}\r\nSec-WebSocket-Version: 13\r\n"
          head << "User-Agent: heron-attack/#{VERSION}\r\n" unless target.headers.any? { |h| h.match?(/\Auser-agent:/i) }
          target.headers.each { |h| head << h.strip << "\r\n" }
          head << "\r\n"
        end
      end
    end
  end
end
