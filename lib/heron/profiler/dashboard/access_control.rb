# frozen_string_literal: true

require "ipaddr"
require "rack/utils"

module Heron
  module Profiler
    class Dashboard
      # Who may see profiling data. Without a `profile_token`: only clients on loopback
      # (127.0.0.0/8, ::1) whose request did not come through a proxy (no Forwarded or
      # X-Forwarded-For header, since a local reverse proxy makes every client look local).
      # With a token: anyone who sends it as `?token=` or `Authorization: Bearer`, and nobody
      # else, loopback included. Callers answer a refusal with {NOT_FOUND}.
      class AccessControl
        LOOPBACK = [IPAddr.new("127.0.0.0/8"), IPAddr.new("::1")].freeze
        PROXY_HEADERS = %w[HTTP_FORWARDED HTTP_X_FORWARDED_FOR].freeze
        NOT_FOUND = [404, { "content-type" => "text/plain", "content-length" => "10" }, ["Not Found\n"]].freeze

        # @param config [Heron::Configuration] reads `profile_token`.
        def initialize(config)
          @token = config.profile_token&.to_s
        end

        # @param env [Hash] the Rack env.
        # @return [Boolean] whether this request may see profiling data.
        def allowed?(env)
          @token ? token_given?(env) : local?(env)
        end

        # @param env [Hash] the Rack env.
        # @return [String, nil] the token when the request carried the right one in its query
        #   string (links must then carry it on); nil otherwise.
        def query_token(env)
          return nil unless @token
          Array(query_params(env)["token"]).find { |given| given.is_a?(String) && Rack::Utils.secure_compare(given, @token) }
        end

        # @return [Array] a fresh copy of the plain 404 response.
        def not_found
          [404, NOT_FOUND[1].dup, NOT_FOUND[2].dup]
        end

        private

        def token_given?(env)
          !query_token(env).nil? || bearer_matches?(env["HTTP_AUTHORIZATION"].to_s)
        end

        def bearer_matches?(header)
          given = header[/\ABearer +(\S+)\z/i, 1]
          !given.nil? && Rack::Utils.secure_compare(given, @token)
        end

        def local?(env)
          return false if PROXY_HEADERS.any? { |name| env.key?(name) }
          address = IPAddr.new(env["REMOTE_ADDR"].to_s)
          address = address.native if address.ipv4_mapped?
          LOOPBACK.any? { |range| range.include?(address) }
        rescue IPAddr::Error
          false
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
