# frozen_string_literal: true

require "rack/utils"

module Heron
  module Log
    # Hides a secret given in a query string before the access log writes it: the profiler's
    # `profile_token` sent as `?token=...` (see Profiler::Dashboard::AccessControl). Only a
    # `token` parameter whose value is that secret is replaced, so an app's own parameters are
    # logged as they were.
    class QueryRedactor
      PARAM = "token"
      MASK = "[REDACTED]"

      # @param secret [String] the value to hide.
      def initialize(secret)
        @secret = secret.to_s
      end

      # @param env [Hash] the request's Rack env.
      # @return [Hash] env itself when its query string holds no secret, else a copy whose
      #   QUERY_STRING has the secret's value replaced by {MASK}.
      def redact(env)
        query = env["QUERY_STRING"]
        return env unless query.is_a?(String) && query.include?("#{PARAM}=")
        hidden = query.split("&", -1).map { |pair| secret_pair?(pair) ? "#{PARAM}=#{MASK}" : pair }.join("&")
        hidden == query ? env : env.merge("QUERY_STRING" => hidden)
      end

      private

      def secret_pair?(pair)
        name, value = pair.split("=", 2)
        return false unless name == PARAM && value
        Rack::Utils.secure_compare(Rack::Utils.unescape(value), @secret)
      rescue ArgumentError
        false
      end
    end
  end
end
