# frozen_string_literal: true

require "ipaddr"

module Heron
  module Profiler
    # Whether a request's `X-Request-Start` may be believed: its peer is one of the
    # `trusted_proxies`. Under Heron the server has decided that from the socket's peer and
    # marked the env ({PEER_KEY}, in every env it builds, which carry {START_KEY}); under any
    # other server the profiler takes REMOTE_ADDR for the peer and matches it itself.
    class TrustedPeer
      # The env keys Heron's env builders set (Heron::TrustedProxies documents them).
      START_KEY = "heron.request_start"
      PEER_KEY = "heron.trusted_proxy"
      UNIX_PEER_KEY = "heron.unix_socket"

      # @param entries [Array<String>] addresses and CIDRs, checked ({OptionTypes.cidrs}).
      def initialize(entries)
        @ranges = entries.map { |entry| IPAddr.new(entry) }
      end

      # @return [Boolean] whether no proxy is trusted.
      def empty? = @ranges.empty?

      # @param env [Hash] a Rack env.
      # @return [Boolean] whether the request's peer is a trusted proxy.
      def trusted?(env)
        return env[PEER_KEY] == true if env.key?(START_KEY)
        matches?(env["REMOTE_ADDR"])
      end

      private

      # #native turns IPv4-mapped IPv6 (::ffff:10.0.0.1) into IPv4 and leaves the rest alone.
      def matches?(address)
        ip = IPAddr.new(address.to_s).native
        @ranges.any? { |range| range.family == ip.family && range.include?(ip) }
      rescue IPAddr::Error
        false
      end
    end
  end
end
