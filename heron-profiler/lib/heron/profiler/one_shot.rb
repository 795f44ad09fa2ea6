# frozen_string_literal: true

require "stringio"
require "rack/utils"

module Heron
  module Profiler
    # Runs the app once for a profiling tool ({MemoryProfile}, {Flamegraph}) in place of the
    # response: the app sees the query string without `__heron`, `format=speedscope` and the
    # profile token (when the request gave it there), its body is read to the end and closed, and the tool
    # answers with a report of its own.
    class OneShot
      NO_STORE = { "cache-control" => "no-store" }.freeze
      SPEEDSCOPE = "format=speedscope"

      # @param app [#call] the Rack app.
      # @param access [Dashboard::AccessControl] knows the token to leave out.
      def initialize(app, access)
        @app = app
        @access = access
      end

      # @param env [Hash] the request's Rack env.
      # @return [Hash] a copy for the app, with the tool's parameters left out of its query string.
      def app_env(env)
        env.merge("QUERY_STRING" => clean_query(env))
      end

      # Calls the app and reads its whole body (an Array, an `each` body or a streaming one).
      # @param env [Hash] what {#app_env} returned.
      # @return [Integer, Object] the app's status.
      def call(env)
        status, _headers, body = @app.call(env)
        drain(body)
        status
      end

      # @param env [Hash] a Rack env.
      # @return [String] "/path?query" ("/path" when the query string is empty).
      def target(env)
        query = env["QUERY_STRING"].to_s
        query.empty? ? env["PATH_INFO"].to_s : "#{env['PATH_INFO']}?#{query}"
      end

      # @param status [Integer] the HTTP status.
      # @param type [String] the content type.
      # @param body [String] the whole body.
      # @return [Array(Integer, Hash, Array<String>)] an uncacheable Rack response.
      def self.respond(status, type, body)
        [status, NO_STORE.merge("content-type" => type, "content-length" => body.bytesize.to_s), [body]]
      end

      # Requires the gem a tool needs.
      # @param library [String] the feature to require.
      # @return [LoadError, nil] the error when it cannot be loaded.
      def self.load(library)
        require library
        nil
      rescue LoadError => error
        error
      end

      # @param what [String] the tool and its verb, e.g. "Flamegraphs need".
      # @param gem [String] the gem it needs.
      # @param error [LoadError] why it could not be loaded.
      # @return [Array] a 501 saying to add the gem to the app's bundle.
      def self.unavailable(what, gem, error)
        respond(501, "text/plain; charset=utf-8",
                "#{what} the #{gem} gem, which this app cannot load (#{error.message}).\n" \
                "Add `gem \"#{gem}\"` to the app's Gemfile, run `bundle install`, restart, and ask again.\n")
      end

      private

      def drain(body)
        body.respond_to?(:each) ? body.each { |_chunk| nil } : body.call(StringIO.new)
      ensure
        body.close if body.respond_to?(:close)
      end

      def clean_query(env)
        token = @access.query_token(env)
        pairs = env["QUERY_STRING"].to_s.split("&").reject do |pair|
          name, value = pair.split("=", 2)
          name == "__heron" || pair == SPEEDSCOPE || (token && name == "token" && Rack::Utils.unescape(value.to_s) == token)
        end
        pairs.join("&")
      end
    end
  end
end
