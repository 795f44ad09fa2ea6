# frozen_string_literal: true

require "async"
require_relative "io_timeout"
require_relative "connection"
require_relative "tls_context"
require_relative "timed_client"

module Heron
  module Attack
    # A small HTTP/1.1 client (over TCP or TLS) for the generator: resolves each host once, keeps
    # idle keep-alive connections in a pool per origin, and opens a new connection whenever none
    # is idle (the caller caps concurrency if it wants to). Its connections share one read
    # scratch, so a client is used from one thread.
    class Client < TimedClient
      # @param timeout [Numeric] seconds allowed for connect, send and the whole response.
      # @param keepalive [Boolean] whether to reuse connections.
      # @param tls [OpenSSL::SSL::SSLContext, nil] the context for https:// targets; nil builds
      #   one that verifies certificates against the system's CAs when first needed.
      def initialize(timeout:, keepalive: true, tls: nil)
        super(timeout)
        @keepalive = keepalive
        @tls = tls
        @idle = Hash.new { |hash, key| hash[key] = [] }
        @scratch = String.new(capacity: Connection::READ_SIZE, encoding: Encoding::BINARY)
      end

      private

      def close_connections
        @idle.each_value { |list| list.each(&:close).clear }
      end

      def exchange(target, reuse: true)
        connection = reuse ? checkout(target) : open(target)
        response = connection.exchange(target.to_bytes, head: target.head?)
        checkin(target, connection, response)
        response
      rescue EOFError, Errno::ECONNRESET, Errno::EPIPE
        connection&.close
        # A reused connection the server had already closed: one retry on a new connection.
        raise unless reuse && connection&.uses&.positive?
        exchange(target, reuse: false)
      rescue StandardError
        connection&.close
        raise
      end

      def checkout(target)
        @idle[target.origin].pop || open(target)
      end

      def open(target)
        return Connection.open(resolve(target), scratch: @scratch) unless target.tls?
        Connection.open(resolve(target), tls: (@tls ||= TLSContext.build), host: target.uri.hostname, scratch: @scratch)
      end

      def checkin(target, connection, response)
        return connection.close unless @keepalive && response.keepalive
        @idle[target.origin].push(connection)
      end
    end
  end
end
