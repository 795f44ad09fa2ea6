# frozen_string_literal: true

require "async"
require_relative "../tls_context"
require_relative "../timed_client"
require_relative "connection"
require_relative "pool"

module Heron
  module Attack
    module HTTP2
      # The HTTP/2 counterpart of {Attack::Client}: the same #call, #resolve and #close, with
      # each origin's requests multiplexed over a {Pool} of connections (h2 over TLS for https://
      # targets, h2c with prior knowledge for http:// ones).
      class Client < TimedClient
        ALPN = ["h2"].freeze
        RETRIES = 25

        # @param timeout [Numeric] seconds allowed for connect, send and the whole response.
        # @param connections [Integer] connections per origin.
        # @param max_streams [Integer] requests at once per connection (the server's
        #   SETTINGS_MAX_CONCURRENT_STREAMS lowers it).
        # @param tls [OpenSSL::SSL::SSLContext, nil] a context offering "h2" by ALPN; nil builds one
        #   that verifies against the system's CAs when first needed.
        def initialize(timeout:, connections:, max_streams:, tls: nil)
          super(timeout)
          @connections = connections
          @max_streams = max_streams
          @tls = tls
          @pools = {}
        end

        private

        def close_connections
          @pools.each_value(&:close)
        end

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
          @pools[target.origin] ||= Pool.new(@connections) { open(target) }
        end

        def open(target)
          tls = target.tls? ? (@tls ||= TLSContext.build(alpn: ALPN)) : nil
          Connection.open(resolve(target), tls: tls, host: target.uri.hostname, max_streams: @max_streams)
        end
      end
    end
  end
end
