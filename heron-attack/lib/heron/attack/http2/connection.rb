# frozen_string_literal: true

require "async"
require "protocol/http2/client"
require "protocol/http2/framer"
require_relative "../connection"
require_relative "../protocol_error"
require_relative "../socket_stream"
require_relative "stream"
require_relative "unprocessed"
require_relative "header_block"

module Heron
  module Attack
    module HTTP2
      # One HTTP/2 connection to a server (h2 over TLS, agreed by ALPN, or h2c with prior
      # knowledge over TCP) carrying many requests at once, each on its own {Stream}. A fiber
      # reads frames and hands them to the streams; the requests' fibers write their own frames.
      # It takes at most max_streams requests at a time, fewer when the server's
      # SETTINGS_MAX_CONCURRENT_STREAMS is lower.
      class Connection
        # What the client tells the server: no push, and a large stream window so responses
        # are not held up by window updates (h2load's default is about the same).
        SETTINGS = [[Protocol::HTTP2::Settings::ENABLE_PUSH, 0],
                    [Protocol::HTTP2::Settings::INITIAL_WINDOW_SIZE, (2**30) - 1]].freeze
        LAST_STREAM_ID = (2**31) - 1
        # protocol-http2's frame types, with HEADERS read by {HeaderBlock}.
        FRAMES = Protocol::HTTP2::FRAMES.dup.tap { |frames| frames[Protocol::HTTP2::HeadersFrame::TYPE] = HeaderBlock }.freeze

        # Connects, runs the TLS handshake (with ALPN) when given a context, and exchanges the
        # connection preface and SETTINGS.
        # @param addrinfo [Addrinfo] @param tls [OpenSSL::SSL::SSLContext, nil] offering "h2".
        # @param host [String] the URL's host (SNI, certificate check).
        # @param max_streams [Integer] the client's own cap on streams at once.
        # @return [Connection]
        # @raise [ProtocolError] when a TLS server does not choose h2.
        # @raise [SystemCallError, OpenSSL::SSL::SSLError, Protocol::HTTP2::Error, EOFError]
        def self.open(addrinfo, tls:, host:, max_streams:)
          socket = Socket.new(addrinfo.afamily, Socket::SOCK_STREAM)
          Attack::Connection.connect(socket, addrinfo.to_sockaddr)
          socket.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, 1)
          socket = Attack::Connection.handshake(socket, tls, host) if tls
          raise ProtocolError, "the server did not agree to HTTP/2 (ALPN: #{socket.alpn_protocol.inspect})" if tls && socket.alpn_protocol != "h2"
          new(socket, max_streams).tap(&:start)
        rescue StandardError
          socket&.close
          raise
        end

        # @param socket [Socket, OpenSSL::SSL::SSLSocket] connected.
        # @param max_streams [Integer]
        def initialize(socket, max_streams)
          @session = Protocol::HTTP2::Client.new(Protocol::HTTP2::Framer.new(SocketStream.new(socket), FRAMES))
          @max_streams = max_streams
          @active = 0
          @last_id = 0
        end

        # @api private
        # Sends the preface and SETTINGS, waits for the server's SETTINGS, then reads frames in a
        # fiber of its own until the connection ends.
        # @return [void]
        def start
          @session.send_connection_preface(SETTINGS)
          @reader = Async::Task.current.async(transient: true) { read_frames }
        end

        # @return [Integer] how many more requests this connection takes now (0 once it is
        #   closed, told to go away, or out of stream ids).
        def capacity
          return 0 unless usable?
          [@max_streams, @session.maximum_concurrent_streams].min - @active
        end

        # @return [Integer] requests in flight on this connection.
        attr_reader :active

        # Counts a request against {#capacity} before it starts.
        # @return [void]
        def reserve
          @active += 1
        end

        # @return [Boolean] whether new streams may be opened on this connection.
        def usable?
          !@session.closed? && @last_id < LAST_STREAM_ID - 1
        end

        # Sends one request (reserved with {#reserve}) and waits for its response.
        # @param target [Target]
        # @return [Response]
        def request(target)
          raise EOFError, "the HTTP/2 connection is closed" if @session.closed?
          stream = @session.create_stream { |session, id| Stream.create(session, @last_id = id) }
          stream.send_request(target.h2_headers, target.body)
          response = stream.response
        rescue Protocol::HTTP2::Error, IOError, SystemCallError => e # EOFError is an IOError
          raise Unprocessed, "not processed by the server (#{e.message})" if stream && unprocessed?(stream, e)
          raise
        ensure
          stream&.cancel unless response # a timeout raised into this fiber, or a failure
          @active -= 1
        end

        # Closes the socket; streams still open fail.
        # @return [void]
        def close
          @reader&.stop
          @session.close unless @session.framer.nil?
        end

        private

        # A stream the server's GOAWAY left out, or one it refused.
        def unprocessed?(stream, error)
          return true if error.is_a?(Protocol::HTTP2::StreamError) && error.code == Protocol::HTTP2::REFUSED_STREAM
          @goaway_last_id && stream.id > @goaway_last_id
        end

        def read_frames
          @session.read_frame { |frame| goaway(frame) } until @session.framer.nil?
        rescue StandardError => e
          @session.close(e)
        end

        def goaway(frame)
          @goaway_last_id = frame.unpack.first if frame.is_a?(Protocol::HTTP2::GoawayFrame)
        end
      end
    end
  end
end
