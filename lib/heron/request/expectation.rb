# frozen_string_literal: true

module Heron
  class Request
    # The request's `Expect` header (RFC 9110 §10.1.1): whether a `100 Continue` is owed before
    # the client sends the body. HTTP/1.0 requests never expect one.
    class Expectation
      # Raised for an Expect value other than 100-continue; the connection answers 417.
      class Failed < StandardError
        # @return [Integer] the HTTP status this maps to.
        def status = 417
      end

      # @param env [Hash] the parsed request env.
      # @param http_minor [Integer] 0 or 1.
      # @param length [Integer, nil] the body length, nil when chunked.
      # @return [Expectation] {NONE} for a request without `Expect` (most of them: nothing is
      #   allocated), else a new one.
      # @raise [Failed] for an unsupported expectation on HTTP/1.1.
      def self.for(env, http_minor, length)
        env.key?("HTTP_EXPECT") ? new(env, http_minor, length) : NONE
      end

      # @param env [Hash] the parsed request env.
      # @param http_minor [Integer] 0 or 1.
      # @param length [Integer, nil] the body length, nil when chunked.
      # @raise [Failed] for an unsupported expectation on HTTP/1.1.
      def initialize(env, http_minor, length)
        @pending = false
        value = env["HTTP_EXPECT"]
        return if value.nil? || http_minor.zero?
        raise Failed, "unsupported expectation #{value[0, 40].inspect}" unless value.casecmp?("100-continue")
        @pending = length != 0
      end

      # @return [Boolean] whether the client waits for `100 Continue` and has not been answered.
      def pending? = @pending

      # Records that the client was answered (or started sending anyway).
      def answered!
        @pending = false
      end

      # The expectation of every request without `Expect`: never pending, shared, frozen.
      NONE = new({}, 1, 0).freeze
    end
  end
end
