# frozen_string_literal: true

require_relative "dashboard/access_control"
require_relative "one_shot"
require_relative "flamegraph/fiber_intervals"
require_relative "flamegraph/samples"
require_relative "flamegraph/html_page"
require_relative "flamegraph/speedscope"

module Heron
  module Profiler
    # Answers `?__heron=flamegraph` requests: runs the app once under stackprof (wall-clock
    # samples every millisecond, `raw: true`) and returns a flame graph of it as a
    # self-contained HTML page, or with `&format=speedscope` as a speedscope JSON file, instead
    # of the app's response. Needs `stackprof` in the app's bundle: without it the answer is a
    # 501 naming the gem. Same access rules as the {Dashboard} and the {MemoryProfile}.
    #
    # stackprof samples whatever runs when its timer fires, and under the fiber scheduler that
    # may be another request's fiber or the event loop. The request is run under a profile of
    # its own, so the fibers it works for (its own, and Async tasks it starts) are known, and
    # {FiberIntervals} notes when they ran: only samples taken then are drawn; the others are
    # counted on the page. One flamegraph runs at a time per process.
    class Flamegraph
      LOCK = Mutex.new
      INTERVAL = 1000 # microseconds between samples
      CSP = "default-src 'none'; style-src 'unsafe-inline'"

      # @param app [#call] the Rack app to profile.
      # @param config [Heron::Configuration] reads `profile_token`.
      # @param accounting [FiberAccounting] which profile each fiber works for.
      # @param library [String] the feature to require; only tests change it.
      def initialize(app, config, accounting: Profiler.accounting, library: "stackprof")
        @access = Dashboard::AccessControl.new(config)
        @run = OneShot.new(app, @access)
        @accounting = accounting
        @library = library
      end

      # @param env [Hash] the Rack env of a request whose query string has `__heron=flamegraph`.
      # @return [Array(Integer, Hash, Array<String>)] the page or JSON, a 501, or a plain 404.
      def call(env)
        return @access.not_found unless @access.allowed?(env)
        error = OneShot.load(@library)
        return OneShot.unavailable("Flamegraphs need", "stackprof", error) if error
        samples, summary = LOCK.synchronize { measure(env, @run.app_env(env)) }
        return busy unless samples
        render(samples, summary, env)
      end

      private

      def busy
        OneShot.respond(409, "text/plain; charset=utf-8", "stackprof is already running in this process; try again.\n")
      end

      # Runs the app under its own profile (closed before its counters are read).
      def measure(env, app_env)
        return nil if ::StackProf.running?
        profile = @accounting.open(RequestProfile.new(env["REQUEST_METHOD"], env["PATH_INFO"], app_env["QUERY_STRING"]))
        begin
          samples, status = sample(profile, app_env)
        ensure
          @accounting.close(profile)
        end
        [samples, summary(env, app_env, status, profile)]
      end

      def sample(profile, app_env)
        intervals = FiberIntervals.new(profile, @accounting)
        status = nil
        result = intervals.record { ::StackProf.run(mode: :wall, raw: true, interval: INTERVAL) { status = @run.call(app_env) } }
        [Samples.new(result, intervals), status]
      end

      def summary(env, app_env, status, profile)
        { title: "#{env['REQUEST_METHOD']} #{@run.target(app_env)} -> #{status}", cpu_ms: profile.cpu_ms,
          allocations: profile.allocations, speedscope: "#{@run.target(env)}&format=speedscope" }
      end

      def render(samples, summary, env)
        if env["QUERY_STRING"].to_s.split("&").include?(OneShot::SPEEDSCOPE)
          return OneShot.respond(200, "application/json", Speedscope.new(samples, summary[:title]).render)
        end
        page = OneShot.respond(200, "text/html; charset=utf-8", HtmlPage.new(samples, summary).render)
        page[1]["content-security-policy"] = CSP
        page
      end
    end
  end
end
