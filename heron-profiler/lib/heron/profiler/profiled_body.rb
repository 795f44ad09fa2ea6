# frozen_string_literal: true

module Heron
  module Profiler
    # The response body the {Middleware} returns: the app's body, unchanged, that finishes the
    # request's profile when the server closes it. Unlike Rack::BodyProxy it takes no block and
    # forwards the body's Rack methods without method_missing, since it wraps every profiled
    # response.
    class ProfiledBody
      FORWARDED = { each: true, to_ary: true, call: true, to_path: true }.freeze

      # @param body [#each, #call] the app's body.
      # @param middleware [Middleware] told when the body is closed ({Middleware#finish}).
      # @param profile [RequestProfile] the request's profile.
      # @param status [Integer] the response status.
      def initialize(body, middleware, profile, status)
        @body, @middleware, @profile, @status = body, middleware, profile, status
        @closed = false
      end

      # @param name [Symbol]
      # @param include_all [Boolean]
      # @return [Boolean] for each, to_ary, call and to_path, whether the app's body has it.
      def respond_to?(name, include_all = false)
        FORWARDED[name] ? @body.respond_to?(name, include_all) : super
      end

      # @yieldparam part [String] each part of the app's body.
      # @return [void]
      def each(&block)
        @body.each(&block)
      end

      # Per the Rack SPEC, a body answering both to_ary and close is closed by to_ary.
      # @return [Array<String>] the app's body as an Array.
      def to_ary
        @body.to_ary
      ensure
        close
      end

      # @param stream [#read, #write] the streaming body's socket.
      # @return [void]
      def call(stream)
        @body.call(stream)
      end

      # @return [String] the path of a file body.
      def to_path
        @body.to_path
      end

      # Closes the app's body (once), then finishes the profile even when that raised.
      # @return [void]
      def close
        return if @closed
        @closed = true
        begin
          @body.close if @body.respond_to?(:close)
        ensure
          @middleware.finish(@profile, @status)
        end
      end

      # @return [Boolean] whether {#close} was called.
      def closed?
        @closed
      end
    end
  end
end
