# frozen_string_literal: true

require "stringio"
require "rack/utils"
require_relative "dashboard/access_control"

module Heron
  module Profiler
    # Answers `?__heron=memory` requests: runs the app once under the memory_profiler gem and
    # returns its text report (allocated and retained bytes and objects, top allocation sites)
    # instead of the app's response. The app sees the query string without `__heron` (and
    # without the profile token). Needs `memory_profiler` in the app's bundle: without it the
    # answer is a 501 naming the gem. Same access rules as the {Dashboard}.
    #
    # memory_profiler traces allocations process-wide, so profiles run one at a time and can
    # include objects allocated by other requests running concurrently in the same process.
    class MemoryProfile
      LOCK = Mutex.new
      TOP = 30

      # @param app [#call] the Rack app to profile.
      # @param config [Heron::Configuration] reads `profile_token`.
      # @param library [String] the feature to require; only tests change it.
      def initialize(app, config, library: "memory_profiler")
        @app = app
        @access = Dashboard::AccessControl.new(config)
        @library = library
      end

      # @param env [Hash] the Rack env of a request whose query string has `__heron=memory`.
      # @return [Array(Integer, Hash, Array<String>)] the report, a 501, or a plain 404.
      def call(env)
        return @access.not_found unless @access.allowed?(env)
        error = load_library
        return unavailable(error) if error
        text(200, report(env))
      end

      private

      def load_library
        require @library
        nil
      rescue LoadError => error
        error
      end

      def unavailable(error)
        text(501, "Memory profiling needs the memory_profiler gem, which this app cannot load " \
                  "(#{error.message}).\nAdd `gem \"memory_profiler\"` to the app's Gemfile, run " \
                  "`bundle install`, restart, and ask again.\n")
      end

      def report(env)
        app_env = env.merge("QUERY_STRING" => clean_query(env))
        status = nil
        result = LOCK.synchronize { ::MemoryProfiler.report(top: TOP) { status = run_app(app_env) } }
        io = StringIO.new
        io << "Heron memory profile: #{env['REQUEST_METHOD']} #{target(app_env)} -> #{status}\n\n"
        result.pretty_print(io, scale_bytes: true, normalize_paths: true)
        io.string
      end

      def run_app(env)
        status, _headers, body = @app.call(env)
        drain(body)
        status
      end

      def drain(body)
        body.respond_to?(:each) ? body.each { |_chunk| nil } : body.call(StringIO.new)
      ensure
        body.close if body.respond_to?(:close)
      end

      def clean_query(env)
        token = @access.query_token(env)
        pairs = env["QUERY_STRING"].to_s.split("&").reject do |pair|
          name, value = pair.split("=", 2)
          name == "__heron" || (token && name == "token" && Rack::Utils.unescape(value.to_s) == token)
        end
        pairs.join("&")
      end

      def target(env)
        query = env["QUERY_STRING"]
        query.empty? ? env["PATH_INFO"].to_s : "#{env['PATH_INFO']}?#{query}"
      end

      def text(status, body)
        [status, { "content-type" => "text/plain; charset=utf-8", "content-length" => body.bytesize.to_s,
                   "cache-control" => "no-store" }, [body]]
      end
    end
  end
end
