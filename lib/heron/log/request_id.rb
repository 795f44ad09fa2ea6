# frozen_string_literal: true

require "securerandom"
require_relative "../native"
Heron::Native.load("heron_ext")

module Heron
  module Log
    # Each request's id: the client's (or proxy's) `X-Request-Id` when it is sane, else a new one.
    # It is put in the env twice, as `heron.request_id` and as `HTTP_X_REQUEST_ID` (where Rails'
    # ActionDispatch::RequestId and most middleware look, so the app logs the same id), written
    # in the access log, and echoed in the response's `x-request-id` unless the app set one.
    #
    # A new id is a random per-process prefix and a counter: unique across processes and
    # restarts without a random draw per request.
    class RequestId
      ENV_KEY = "heron.request_id"
      HEADER_KEY = "HTTP_X_REQUEST_ID"
      RESPONSE_HEADER = "x-request-id"
      # What a kept id may hold: up to 128 letters, digits, "-", "_" and "@". Rails'
      # ActionDispatch::RequestId strips every other character from the id it finds in the env,
      # so a wider set would make Rails log a different id than Heron.
      SANE = /\A[A-Za-z0-9\-_@]{1,128}\z/

      class << self
        # assign(env) and generate are C (ext/heron/heron_log_request_id.c): assign keeps a sane
        # HTTP_X_REQUEST_ID (see SANE) or generates one, and sets it as both ENV_KEY and
        # HEADER_KEY; generate returns "#{@prefix}-#{count in base 36}".

        # Adds `x-request-id` to a response's headers unless the app set it (frozen headers are
        # copied, not changed).
        # @param response [Array] the app's response.
        # @param env [Hash] the request's env.
        # @return [Array] the response, or a copy with the copied headers.
        def echo(response, env)
          id = env[ENV_KEY]
          headers = response[1] if response.is_a?(Array) && response.size == 3
          return response unless id && headers.is_a?(Hash) && !headers.key?(RESPONSE_HEADER)
          return [response[0], headers.merge(RESPONSE_HEADER => id), response[2]] if headers.frozen?
          headers[RESPONSE_HEADER] = id
          response
        end

        # Starts a new prefix: a forked child (see Process._fork below) must not repeat its
        # parent's ids. Cheaper than comparing the pid on every request (a system call).
        # @return [void]
        def reseed
          @prefix = SecureRandom.hex(6)
          @count = 0
        end
      end

      # Reseeds in every forked child (Ruby 3.1+ calls Process._fork for every fork).
      module ForkHook
        # @return [Integer] the child's pid in the parent, 0 in the child.
        def _fork
          pid = super
          RequestId.reseed if pid.zero?
          pid
        end
      end
    end
  end
end

Process.singleton_class.prepend(Heron::Log::RequestId::ForkHook)
