# frozen_string_literal: true

require "stringio"
require_relative "dashboard/access_control"
require_relative "one_shot"

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
        @access = Dashboard::AccessControl.new(config)
        @run = OneShot.new(app, @access)
        @library = library
      end

      # @param env [Hash] the Rack env of a request whose query string has `__heron=memory`.
      # @return [Array(Integer, Hash, Array<String>)] the report, a 501, or a plain 404.
      def call(env)
        return @access.not_found unless @access.allowed?(env)
        error = OneShot.load(@library)
        return OneShot.unavailable("Memory profiling needs", "memory_profiler", error) if error
        text(200, report(env))
      end

      private

      def report(env)
        app_env = @run.app_env(env)
        status = nil
        result = LOCK.synchronize { ::MemoryProfiler.report(top: TOP) { status = @run.call(app_env) } }
        io = StringIO.new
        io << "Heron memory profile: #{env['REQUEST_METHOD']} #{@run.target(app_env)} -> #{status}\n\n"
        result.pretty_print(io, scale_bytes: true, normalize_paths: true)
        io.string
      end

      def text(status, body)
        OneShot.respond(status, "text/plain; charset=utf-8", body)
      end
    end
  end
end
