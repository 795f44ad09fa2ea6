# frozen_string_literal: true

module Heron
  # One request on a connection: its env, body, framing decisions and what was sent back.
  class Request
    # @return [Hash] the Rack env.
    attr_reader :env
    # @return [Input] the request body.
    attr_reader :input
    # @return [Float] monotonic time the request's first byte arrived.
    attr_reader :started_at
    # @return [Boolean] whether the connection may serve another request after this one.
    attr_accessor :keepalive
    # @return [Integer, nil] the status sent, once the head is written.
    attr_accessor :status
    # @return [Float, nil] monotonic time the app was called.
    attr_accessor :app_started_at
    # @return [Hash, nil] the response headers, once the head is written.
    attr_accessor :headers
    # @return [Integer] body bytes sent.
    attr_accessor :bytes
    # @return [Exception, nil] the app's exception or the write error, for response_finished.
    attr_accessor :error
    # @return [Boolean, nil] whether the response switched protocols (101 / upgrade).
    attr_accessor :upgraded

    # Positional, not keywords: made for every request, and keywords passed through Class#new
    # cost a Hash each on Ruby 3.1.
    # @param env [Hash]
    # @param input [Input]
    # @param keepalive [Boolean] what the client asked for.
    # @param http_minor [Integer] 0 or 1.
    # @param started_at [Float]
    def initialize(env, input, keepalive, http_minor, started_at)
      reuse(env, input, keepalive, http_minor, started_at)
    end

    # Makes this object the next request on its connection, as new: a connection keeps its
    # finished request's object (see {#clear}) instead of making one per request.
    # @param (see #initialize)
    # @return [Request] self.
    def reuse(env, input, keepalive, http_minor, started_at)
      @env = env
      @input = input
      @keepalive = keepalive
      @http_minor = http_minor
      @started_at = started_at
      @bytes = 0
      @status = @app_started_at = @headers = @error = @upgraded = nil
      self
    end

    # Drops what the finished request refers to (env, body, headers, error), so a connection
    # that keeps this object for its next request holds none of them while idle.
    # @return [Request] self.
    def clear
      @env = @input = @headers = @error = nil
      self
    end

    # @return [Float, nil] seconds between the request's first byte (or accept) and the app call.
    def queue_seconds
      app_started_at && app_started_at - started_at
    end

    # @return [Boolean] whether this is a HEAD request (no body in the response).
    def head?
      @env["REQUEST_METHOD"] == "HEAD"
    end

    # @return [Boolean] whether the client speaks HTTP/1.1 (so chunked responses are possible).
    def http11?
      @http_minor == 1
    end
  end
end
