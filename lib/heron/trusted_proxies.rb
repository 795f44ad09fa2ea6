# frozen_string_literal: true

require "ipaddr"

module Heron
  # The proxies whose word Heron takes about the client: a list of addresses and CIDRs
  # (`trusted_proxies` setting). A request whose peer is one of them may say who the client is
  # (X-Forwarded-For, Forwarded) and when the request arrived (X-Request-Start); anyone else's
  # headers are ignored.
  #
  # The client is the rightmost address in the forwarding chain that is not a trusted proxy: each
  # trusted hop appends what it saw, so everything left of the first untrusted hop could have been
  # written by the client itself.
  #
  # Heron's env builders mark each request's env: {PEER_KEY} when the peer (the socket's, before
  # any REMOTE_ADDR rewriting) is a trusted proxy, and {UNIX_PEER_KEY} when it came over a
  # unix-socket listener (REMOTE_ADDR is then "127.0.0.1" by convention, which says nothing about
  # who connected). The profiler (heron-profiler's Heron::Profiler::TrustedPeer) reads both.
  class TrustedProxies
    PEER_KEY = "heron.trusted_proxy"
    UNIX_PEER_KEY = "heron.unix_socket"
    FOR_PARAMETER = /(?:\A|[;,\s])for\s*=\s*("[^"]*"|[^;,\s]+)/i
    private_constant :FOR_PARAMETER

    # An empty list: nobody is trusted.
    # @param entries [Array<String>] a `trusted_proxies` setting.
    # @return [TrustedProxies] one shared instance per distinct list (each connection asks).
    def self.cached(entries)
      (@cache ||= {})[entries] ||= new(entries)
    end

    # @param entry [String] "10.0.0.0/8", "::1" or "192.168.1.7".
    # @return [Boolean] whether `entry` is an address or a CIDR.
    def self.valid?(entry)
      IPAddr.new(entry.to_s)
      true
    rescue ArgumentError # IPAddr::Error is one
      false
    end

    # @param entries [Array<String>] addresses and CIDRs (checked by {.valid?} first).
    def initialize(entries)
      @ranges = entries.map { |entry| IPAddr.new(entry) }
    end

    # @return [Boolean] whether no proxy is trusted.
    def empty? = @ranges.empty?

    # Whether a connection's forwarding headers (X-Forwarded-For, Forwarded, X-Request-Start)
    # may be believed: the hop that handed Heron the request is a trusted proxy. That hop is the
    # socket's peer; behind a PROXY protocol header it is the header's source, and the header
    # itself is only as good as whoever sent it, so the socket's peer must be trusted too (anyone
    # who reaches the listener can write "PROXY TCP4 10.0.0.1 ...").
    # @param socket_peer [String] the socket's peer address.
    # @param source [String, nil] the client's address from a PROXY header, if any.
    # @return [Boolean]
    def forwarding?(socket_peer, source = nil)
      include?(socket_peer) && (source.nil? || include?(source))
    end

    # @param address [String, nil] an IP address (IPv4-mapped IPv6 counts as IPv4).
    # @return [Boolean] whether it is a trusted proxy.
    def include?(address)
      return false if address.nil? || @ranges.empty?
      ip = IPAddr.new(address)
      ip = ip.native if ip.ipv6?
      @ranges.any? { |range| range.family == ip.family && range.include?(ip) }
    rescue ArgumentError # IPAddr::Error is one
      false
    end

    # REMOTE_ADDR for a request from `peer` with `env`'s headers; marks the env
    # (`heron.trusted_proxy`) when the peer is a trusted proxy, for X-Request-Start.
    # @param env [Hash] a Rack env with its HTTP_* fields.
    # @param peer [String] the connection's peer.
    # @return [String]
    def remote_addr(env, peer)
      return peer unless include?(peer)
      env[PEER_KEY] = true
      client_address(peer, env["HTTP_X_FORWARDED_FOR"], env["HTTP_FORWARDED"])
    end

    # The client's address for a request.
    # @param peer [String] the socket's peer address.
    # @param forwarded_for [String, nil] the X-Forwarded-For header.
    # @param forwarded [String, nil] the Forwarded header (RFC 7239), used when X-Forwarded-For is absent.
    # @return [String] the rightmost untrusted address of the chain ending at `peer`, the
    #   leftmost hop when all are trusted, or `peer` itself when `peer` is not trusted. A hop that
    #   is not an address ("unknown", "_hidden", garbage) ends the walk at the trusted hop to its
    #   right: what lies left of it cannot be vouched for.
    def client_address(peer, forwarded_for, forwarded = nil)
      return peer unless include?(peer)
      hops = forwarded_for ? split_forwarded_for(forwarded_for) : split_forwarded(forwarded)
      nearest = peer
      hops.reverse_each do |hop|
        return nearest if hop.nil?
        return hop unless include?(hop)
        nearest = hop
      end
      nearest
    end

    private

    def split_forwarded_for(header)
      header.split(",").map { |hop| address_of(hop.strip) }
    end

    def split_forwarded(header)
      return [] unless header
      header.split(",").map { |element| (match = FOR_PARAMETER.match(element)) && address_of(match[1]) }
    end

    # "1.2.3.4", "1.2.3.4:80", "\"[2001:db8::1]:4711\"", "[::1]" → the address; "unknown" and
    # obfuscated identifiers ("_hidden") → nil, so they are skipped like any invalid hop.
    def address_of(text)
      text = text.delete('"')
      text = text[/\A\[([^\]]+)\]/, 1] || (text.count(":") == 1 ? text.split(":").first : text)
      IPAddr.new(text).to_s
    rescue ArgumentError # IPAddr::Error is one
      nil
    end
  end
end
