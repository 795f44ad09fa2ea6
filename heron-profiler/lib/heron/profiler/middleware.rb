# frozen_string_literal: true

require_relative "extension"
require_relative "trusted_peer"
require_relative "dashboard/access_control"
require_relative "profiled_body"
require_relative "route_stats"
require_relative "queue_time"
require_relative "record"
require_relative "options"

module Heron
  module Profiler
    # Measures each request (see {RequestProfile}), adds a `server-timing` header whose `heron`
    # entry is the record's id, reports N+1 queries, and keeps the record in the {Store}.
    # Requests under `config.profile_path` go to the dashboard, `?__heron=memory` to the memory
    # profile and `?__heron=flamegraph` to the {Flamegraph}, when those are available.
    #
    # The record is finished when no app code is left to run: when the app returns an Array
    # body, else when the server closes the body ({ProfiledBody}), which Heron (like every Rack
    # server) does right after the last byte is written. `rack.response_finished` would say the
    # same a moment later, but registering any callback there makes Heron start a task per
    # request, which measured at about half of a hello world's throughput (see
    # docs/profiling.md).
    #
    # Every profiled request runs `call`, so the measuring is C: this class is a {Meter}
    # (ext/heron_profiler/profiler_meter.c, whose `call` and `finish` it inherits, so a request
    # enters C straight from the server, with no Ruby frame in between), set up with its
    # settings and with Procs for the cold work (the dashboard, the memory profile, N+1 reports,
    # after-reply timing, checking a request's queries, naming a route); the Meter calls no Ruby
    # method by name. See docs/profiling.md for what a request costs.
    # `config.profile_sample` N measures the first request and one in N after it;
    # `config.profile_cpu_sample` M reads the thread's CPU time (a system call at every fiber
    # switch) for the first measured request and one in M after it, the others getting only the
    # time their fibers held the reactor (see {FiberAccounting}).
    #
    # Trust: a proxy's `X-Request-Start` counts only when the request's peer is one of
    # `config.trusted_proxies`. The profiler's response headers (`server-timing`, and in
    # development `x-heron-n-plus-one`, which holds SQL and file paths) follow the dashboard's
    # rule ({Dashboard::AccessControl}) in every environment: without a `profile_token` only a
    # loopback client with no forwarding header gets them, with one only a request carrying it.
    # Outside development `x-heron-n-plus-one` is never sent.
    class Middleware < Meter
      N_PLUS_ONE_HEADER = "x-heron-n-plus-one"
      UNAVAILABLE = "The Heron profiler dashboard is not available in this build.\n"
      # Query shapes counted for a record that ran more statements than it keeps.
      KEPT_SHAPES = 100

      # @param app [#call] the Rack app.
      # @param config [Options, Heron::Configuration] the profiler's options, or the server's
      #   configuration they are taken from ({Options.for}).
      # @param logger [#warn, nil] where N+1 warnings go; when nil, the options' logger. A logger
      #   whose `warn` takes keywords (Heron passes its own, on config.error_io in
      #   config.log_format) gets the finding's fields too, so JSON logs carry them.
      # @param store [Store] where finished records go.
      # @param accounting [FiberAccounting] the per-fiber counters.
      def initialize(app, config, logger: nil, store: Profiler.store, accounting: Profiler.accounting)
        config = Options.for(config)
        @app, @config, @logger, @store = app, config, logger, store
        Profiler.recorder.configure(config) # process-wide, like the SQL hooks it serves
        @routes = RouteStats.new
        @records = Profiler.records(store, @routes, config)
        @detector = NPlusOneDetector.new(config.n_plus_one_threshold, config.n_plus_one_safelist)
        @development = config.environment_name == "development"
        @trusted = TrustedPeer.new(config.trusted_proxies)
        @access = Dashboard::AccessControl.new(config)
        super(app, accounting, store.is_a?(Store) ? store.ring : store, settings, hooks)
      end

      # `call(env)`, the Rack entry point, and `finish(profile, status)`, which {ProfiledBody}
      # calls once no app code is left to run, are the {Meter}'s (C).

      # The methods below are the {Meter}'s hooks (see {#hooks}), public for subclasses and tests;
      # not meant for apps.

      # @return [Array] the dashboard's response, or a 404 when it is not in this build.
      def dashboard(env)
        dashboard = Profiler.dashboard_class
        return dashboard.new(@records, @config).call(env) if dashboard
        [404, { "content-type" => "text/plain" }, [UNAVAILABLE]]
      end

      # @return [Array, nil] the memory profile's response, nil when memory_profiler is missing
      #   (the request is then measured as usual).
      def memory_profile(env)
        profile = Profiler.memory_profile_class
        profile&.new(@app, @config)&.call(env)
      end

      # @return [Array, nil] the flamegraph's response, nil when it is not in this build (the
      #   request is then measured as usual).
      def flamegraph(env)
        Profiler.flamegraph_class&.new(@app, @config)&.call(env)
      end

      # Asked only for a request that carries X-Request-Start or X-Queue-Start.
      # @param env [Hash] the request's Rack env.
      # @return [Float, nil] the header's queue time ({QueueTime}) when its peer is a trusted
      #   proxy, so the header counts; nil otherwise or when it cannot be read.
      def proxy_queue_ms(env)
        return unless @trusted.trusted?(env)
        header = env["HTTP_X_REQUEST_START"] || env["HTTP_X_QUEUE_START"]
        QueueTime.from_header(header, Process.clock_gettime(Process::CLOCK_REALTIME))
      end

      # Asked for each measured request when a `profile_token` is set.
      # @param env [Hash] the request's Rack env.
      # @return [Boolean] whether its response may carry the profiler's headers.
      def timing_allowed?(env)
        @access.allowed?(env)
      end

      # Hooks the database libraries loaded by now (ActiveRecord may load after the app is built).
      # @return [Boolean] whether that is done.
      def install_hooks
        Profiler.instrumentation.install
      end

      # Reports a request's N+1 queries: a log line, the `x-heron-n-plus-one` header in
      # development to a client the dashboard's rule allows, and NPlusOneError inside
      # {Profiler.raise_on_n_plus_one}.
      # @param profile [RequestProfile]
      # @param headers [Hash] the response headers (writable).
      # @param shown [Boolean] whether this client may see the profiler's headers.
      # @return [void]
      def report_n_plus_one(profile, headers, shown)
        findings = detect(profile)
        return if findings.empty?
        headers[N_PLUS_ONE_HEADER] = @detector.header(findings) if @development && shown
        findings.each { |finding| warn_n_plus_one(finding, profile.to_s) }
        raise NPlusOneError.new(findings, @detector.message(findings, profile.to_s)) if Profiler.raise_on_n_plus_one?
      end

      # One warning per finding: text for any logger, and its fields for Heron's own (JSON).
      def warn_n_plus_one(finding, where)
        message = @detector.message([finding], where).chomp
        logger = @logger || @config.logger
        return logger.warn(message) unless fields?(logger)
        details = { event: @detector.unused?(finding) ? "unused_eager_loading" : "n_plus_one", request: where, count: finding[:count], call_site: finding[:call_site],
                    query: finding[:normalized], advice: finding[:advice] }
        logger.warn(message, **details.compact)
      end

      # Wraps the request's after-reply callables so their time is added to the stored record.
      # @param profile [RequestProfile]
      # @param callables [Array<#call>] env["rack.after_reply"]
      # @return [void]
      def time_after_reply(profile, callables)
        AfterReplyTimer.new(callables) do |ms|
          profile.after_reply_ms = ms
          @store.amend(profile)
        end.wrap
      end

      # Checks a finished request's queries for N+1s and trims what the store keeps of them.
      # @param profile [RequestProfile]
      # @return [void]
      def check_queries(profile)
        profile.n_plus_one = @detector.detect(profile.queries, Sql::EagerLoads.take(profile))
        count_shapes(profile) if profile.queries.size > RequestProfile::KEPT_QUERIES
        profile.trim_queries(RequestProfile::KEPT_QUERIES)
        profile.queries.each(&:compact)
      end

      private

      # Whether a logger's #warn takes the finding's fields as keywords (::Logger's does not).
      def fields?(logger)
        logger.method(:warn).parameters.any? { |kind, _| kind == :keyrest || kind == :key }
      rescue NameError
        false
      end

      # What the {Meter} reads on every request. Which responses get the profiler's headers, in
      # every environment: with no profile_token, AccessControl's loopback rule, asked in C
      # (loopback: true); with one, {#timing_allowed?}.
      def settings
        { profile_path: @config.profile_path, sample: @config.profile_sample, cpu_sample: @config.profile_cpu_sample,
          proxies: !@trusted.empty?, loopback: !@access.token? }
      end

      # The Procs the {Meter} runs for the cold work (see profiler_meter.c's HOOK_NAMES).
      def hooks
        { dashboard: method(:dashboard).to_proc, memory: method(:memory_profile).to_proc,
          flamegraph: method(:flamegraph).to_proc, sql: method(:install_hooks).to_proc,
          proxy_queue: method(:proxy_queue_ms).to_proc, timing: method(:timing_allowed?).to_proc,
          after_reply: method(:time_after_reply).to_proc, queries: method(:check_queries).to_proc,
          n_plus_one: method(:report_n_plus_one).to_proc, route: @routes.method(:route_for).to_proc,
          keep: ->(route, profile) { route.keep(Record.of(profile)) },
          body: ->(body, profile, status) { ProfiledBody.new(body, self, profile, status) },
          push: (@store.method(:push).to_proc unless @store.is_a?(Store)) }
      end

      # Counts every statement by shape before the list is cut to RequestProfile::KEPT_QUERIES,
      # so the record's per-shape counts (its `extras[:shapes]`, the {KEPT_SHAPES} costliest)
      # agree with `db_count` and its N+1 counts.
      def count_shapes(profile)
        rows = profile.queries.group_by(&:normalized).map do |shape, list|
          { normalized: shape, count: list.size, ms: list.sum(&:duration_ms) }
        end
        (profile.extras ||= {})[:shapes] = rows.max_by(KEPT_SHAPES) { |row| [row[:ms], row[:count]] }
      end

      # The N+1 findings so far (a finished profile has its final ones).
      def detect(profile)
        return profile.n_plus_one if profile.finished?
        profile.n_plus_one = @detector.detect(profile.queries, Sql::EagerLoads.of(profile))
      end
    end
  end
end
