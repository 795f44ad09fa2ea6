# frozen_string_literal: true

require "rack/utils"
require_relative "../extension"
require_relative "loopback_rule"

module Heron
  module Profiler
    class Dashboard
      # Who may see profiling data: the dashboard, the memory profile, and the profiler's
      # response headers (`server-timing`, `x-heron-n-plus-one`) in every environment.
      #
      # Without a `profile_token`: only a client on loopback (127.0.0.0/8, ::1) that connected
      # over TCP and whose request carries no forwarding header of any kind ({PROXY_HEADERS}): a
      # reverse proxy on the same host makes every client look local, and proxies differ in the
      # header they add. Never over a unix-socket listener, whose peer is always "127.0.0.1" and
      # is normally a proxy.
      #
      # With a token: anyone who sends it, as `X-Heron-Token: TOKEN`, `Authorization: Bearer
      # TOKEN` or `?token=TOKEN` (the access log then shows it redacted), and nobody else,
      # loopback included. Callers answer a refusal with {NOT_FOUND}.
      #
      # The loopback rule and {PROXY_HEADERS} are C, {LoopbackRule}
      # (ext/heron_profiler/profiler_dashboard_loopback_rule.c): every profiled request asks
      # it, and the {Meter} calls it there without a Ruby call. The
      # peer's address is matched on its text (Addrinfo#ip_address's canonical form: 127.0.0.0/8,
      # ::1, 127.0.0.0/8 mapped into IPv6), not parsed with IPAddr, which cost several µs.
      class AccessControl
        TOKEN_HEADER = "HTTP_X_HERON_TOKEN"
        TOKEN_PARAM = "token"
        PROXY_HEADERS = LoopbackRule::PROXY_HEADERS
        NOT_FOUND = [404, { "content-type" => "text/plain", "content-length" => "10" }, ["Not Found\n"]].freeze

        # @param config [Heron::Configuration] reads `profile_token`.
        def initialize(config)
          @token = config.profile_token&.to_s
        end

        # @return [Boolean] whether a token is required; without one, {#allowed?} is the loopback
        #   rule alone, which the {Meter} asks in C.
        def token?
          !@token.nil?
        end

        # @param env [Hash] the Rack env.
        # @return [Boolean] whether this request may see profiling data.
        def allowed?(env)
          @token ? token_given?(env) : LoopbackRule.local?(env)
        end

        # @param env [Hash] the Rack env.
        # @return [String, nil] the token when the request carried the right one in its query
        #   string (links must then carry it on); nil otherwise.
        def query_token(env)
          return nil unless @token
          Array(query_params(env)[TOKEN_PARAM]).find { |given| given.is_a?(String) && Rack::Utils.secure_compare(given, @token) }
        end

        # @return [Array] a fresh copy of the plain 404 response.
        def not_found
          [404, NOT_FOUND[1].dup, NOT_FOUND[2].dup]
        end

        private

        def token_given?(env)
          header_matches?(env[TOKEN_HEADER]) || bearer_matches?(env["HTTP_AUTHORIZATION"].to_s) || !query_token(env).nil?
        end

        def header_matches?(given)
          given.is_a?(String) && Rack::Utils.secure_compare(given.strip, @token)
        end

        def bearer_matches?(header)
          given = header[/\ABearer +(\S+)\z/i, 1]
          !given.nil? && Rack::Utils.secure_compare(given, @token)
        end

        def query_params(env)
          Rack::Utils.parse_query(env["QUERY_STRING"].to_s)
        rescue StandardError
          {}
        end
      end
    end
  end
end
