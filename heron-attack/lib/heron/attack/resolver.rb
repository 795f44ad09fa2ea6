# frozen_string_literal: true

require "socket"

module Heron
  module Attack
    # Resolves each target host once and remembers the address, so a bad name fails before the
    # attack starts and no request waits for DNS.
    class Resolver
      def initialize
        @addresses = {}
      end

      # IPv4 is preferred: servers commonly bind 0.0.0.0, and "localhost" often resolves to ::1
      # first.
      # @param target [Target]
      # @return [Addrinfo]
      # @raise [SocketError] when the name does not resolve.
      def resolve(target)
        @addresses[target.origin] ||= begin
          found = Addrinfo.getaddrinfo(target.uri.host, target.uri.port, nil, :STREAM)
          found.find(&:ipv4?) || found.first
        end
      end
    end
  end
end
