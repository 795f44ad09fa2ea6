# frozen_string_literal: true

require "socket"
require "uri"

module Heron
  class Binder
    # A bind to the name `localhost` (`rails server` binds it in development): one listener on
    # each loopback address this machine has — 127.0.0.1 and ::1 where IPv6 is up — as Puma does,
    # so `localhost` works whichever family the client resolves it to (`curl -6
    # http://localhost:3000`, browsers that try ::1 first). The addresses come from the
    # interfaces, not from /etc/hosts, which often lists only one of them.
    module Localhost
      NAME = "localhost"
      SCHEMES = %w[tcp ssl].freeze

      module_function

      # @param uri [String] a bind URI.
      # @param addresses [Array<String>] the loopback addresses to listen on.
      # @return [Array<String>] the URI, or one per loopback address when its host is
      #   `localhost` and its port fixed (port 0 would give each a different port: kept as it is).
      def expand(uri, addresses = loopback_addresses)
        parsed = URI.parse(uri)
        return [uri] unless SCHEMES.include?(parsed.scheme) && parsed.host&.downcase == NAME && parsed.port&.positive?
        return [uri] if addresses.empty?
        addresses.map { |address| with_host(parsed, address) }
      rescue URI::InvalidURIError
        [uri]
      end

      # @return [Array<String>] the machine's loopback addresses, IPv4 first.
      def loopback_addresses
        loopback = Socket.ip_address_list.select { |address| address.ipv4_loopback? || address.ipv6_loopback? }
        loopback.sort_by { |address| address.ipv4? ? 0 : 1 }.map(&:ip_address).uniq
      end

      def with_host(parsed, address)
        copy = parsed.dup
        copy.host = address.include?(":") ? "[#{address}]" : address
        copy.to_s
      end
    end
  end
end
