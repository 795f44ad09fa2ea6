# frozen_string_literal: true

require "ipaddr"
require "uri"

module Heron
  module Control
    # Whether a request to the control listener comes from a client that addressed this
    # listener, and not from a web page on another site. Browsers can reach a TCP listener on
    # 127.0.0.1 from any page: a cross-site "simple" POST needs no CORS preflight, and DNS
    # rebinding lets a page read answers under a host name of its own. So the guarded endpoints
    # (`/stats`, `/backtraces`, `POST /control/*`) answer only when:
    #
    # - `Host` names the listener: `localhost` or the IP address the connection arrived on,
    #   with the listener's port (a rebinding page's `Host` is its own name);
    # - `Origin`, when sent, names the listener the same way (a page on another site, or on
    #   another port of this host, sends its own origin; `null` is refused too);
    # - `Sec-Fetch-Site`, when sent, is `same-origin` or `none` (a browser sends `cross-site`
    #   or `same-site` for requests started by another page).
    #
    # `heron ctl`, curl and scripts send a matching `Host` and neither of the others. A Unix
    # socket listener is not reachable from a browser, so nothing is checked there. A request
    # with the right `control_token` skips the `Host` check only: a page cannot know the token,
    # and a port forward (`docker -p`, `kubectl port-forward`) changes the address a client names.
    class SameOrigin
      BROWSER_SITES = %w[same-origin none].freeze

      # @param local [Addrinfo, nil] the connection's local address (nil: a Unix socket or unknown).
      def initialize(local)
        @local = local&.ip? ? local : nil
      end

      # @param headers [Hash{String => String}] lower-cased names.
      # @param host [Boolean] whether to check `Host` (not for a request that carries the token).
      # @return [String, nil] why the request is refused, nil when it may proceed.
      def refusal(headers, host: true)
        return nil unless @local
        given = headers["host"].to_s
        if host && !names_listener?(given)
          return "Host #{given.inspect} does not name this listener (use #{names.join(' or ')})"
        end
        origin = headers["origin"]
        return "cross-site request refused (Origin #{origin})" if origin && !names_listener?(authority(origin))
        site = headers["sec-fetch-site"]
        "cross-site request refused (Sec-Fetch-Site: #{site})" if site && !BROWSER_SITES.include?(site)
      end

      private

      # @return [Array<String>] the Host values accepted, for the error message.
      def names
        ["localhost:#{port}", "#{bracketed(address)}:#{port}"]
      end

      def names_listener?(value)
        host, given_port = split(value)
        return false unless host
        given_port == port && (host.casecmp?("localhost") || same_address?(host))
      end

      def same_address?(host)
        IPAddr.new(host.delete_prefix("[").delete_suffix("]")) == IPAddr.new(address)
      rescue IPAddr::Error
        false
      end

      # "HOST:PORT", "[V6]:PORT" or "HOST" (port 80) → [host, port].
      def split(value)
        match = value.match(/\A(\[[0-9a-fA-F:.]+\]|[^:\[\]]+)(?::(\d{1,5}))?\z/) or return nil
        [match[1], Integer(match[2] || "80", 10)]
      end

      # "http://HOST:PORT" → "HOST:PORT" ("" for anything else: `null`, https, garbage).
      def authority(origin)
        uri = URI.parse(origin)
        uri.scheme == "http" && uri.hostname ? "#{bracketed(uri.hostname)}:#{uri.port}" : ""
      rescue URI::InvalidURIError
        ""
      end

      def address
        @local.ipv6? && @local.ipv6_v4mapped? ? @local.ipv6_to_ipv4.ip_address : @local.ip_address
      end

      def port = @local.ip_port

      def bracketed(host) = host.include?(":") ? "[#{host}]" : host
    end
  end
end
