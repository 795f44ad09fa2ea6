# frozen_string_literal: true

require "async"
require_relative "../deadlines"
require_relative "../tls_context"
require_relative "../resolver"
require_relative "connection"
require_relative "pool"

module Heron
  module Attack
    module HTTP2
      # The HTTP/2 counterpart of {Attack::Client}: the same #call, #resolve and #close, with
      # each origin's requests multiplexed over a {Pool} of connections (h2 over TLS for https://
      # targets, h2c with prior knowledge for http:// ones).
      class Client
        ALPN = ["h2"].freeze
        RETRIES = 25

        # @param timeout [Numeric] seconds allowed for connect, send and the whole response.
        # @param connections [Integer] connections per origin.
        # @param max_streams [Integer] requests at once per connection (the server's
        #   SETTINGS_MAX_CONCURRENT_STREAMS lowers it).
        # @param tls [OpenSSL::SSL::SSLContext, nil] a context offering "h2" by ALPN; nil builds one
        #   that verifies against the system's CAs when first needed.
        def initialize(timeout:, connections:, max_streams:, tls: nil)
          @deadlines = Deadlines.new(timeout)
          @connections = connections
          @max_streams = max_streams
          @tls = tls
          @pools = {}
          @resolver = Resolver.new
        end

        # Sends one request on a stream and reads the response, within the timeout.
        # @param target [Target]
        # @return [Response]
        # @raise [Async::TimeoutError, SystemCallError, EOFError, ProtocolError, Protocol::HTTP2::Error]
        def call(target)
          @deadlines.within { exchange(target) }
        end

        # @param target [Target] @return [Addrinfo] (see {Resolver}).
        # @raise [SocketError]
        def resolve(target)
          @resolver.resolve(target)
        end

        # Closes every connection and stops checking timeouts.
        # @return [void]
        def close
          @pools.each_value(&:close)
          @deadlines.stop
        end

        private

        # One request; one the server did not process ({Unprocessed}: after its GOAWAY, or refused)
        # goes again on another connection, up to {RETRIES} times, within the same timeout.
        def exchange(target, tries = 0)
          pool = pool(target)
          connection = pool.acquire
          begin
            connection.request(target)
          ensure
            pool.release(connection)
          end
        rescue Unprocessed
          raise if tries >= RETRIES
          exchange(target, tries + 1)
        end

        def pool(target)
          @pools[target.origin] ||= Pool.new(@connections) do
            tls = target.tls? ? (@tls ||= TLSContext.build(alpn: ALPN)) : nil
            Connection.open(resolve(target), tls: tls, host: target.uri.hostname, max_streams: @max_streams)
          end
        end
      end
    end
  end
end
