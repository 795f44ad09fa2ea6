# frozen_string_literal: true

require "rack/body_proxy"

module Heron
  module Profiler
    # Measures each request (see {RequestProfile}), adds a `server-timing` header and the record's
    # id (`x-heron-profile-id`), reports N+1 queries, and keeps the record in the {Store}.
    # Requests under `config.profile_path` go to the dashboard and `?__heron=memory` to the memory
    # profile, when those are available.
    #
    # The record is finished when the server closes the response body, which Heron (like every
    # Rack server) does right after the last byte is written. `rack.response_finished` would say
    # the same a moment later, but registering any callback there makes Heron start a task per
    # request, which measured at about half of a hello world's throughput (see
    # docs/profiling.md), so the body's close is used instead.
    class Middleware
      N_PLUS_ONE_HEADER = "x-heron-n-plus-one"
      ID_HEADER = "x-heron-profile-id"
      UNAVAILABLE = "The Heron profiler dashboard is not available in this build.\n"

      # @param app [#call] the Rack app.
      # @param config [Heron::Configuration] profile_path, n_plus_one_threshold, error_io, environment.
      # @param logger [#warn, nil] where N+1 warnings go; config.error_io when nil.
      # @param store [Store] where finished records go.
      # @param accounting [FiberAccounting] the per-fiber counters.
      def initialize(app, config, logger: nil, store: Profiler.store, accounting: Profiler.accounting)
        @app, @config, @logger, @store, @accounting = app, config, logger, store, accounting
        @detector = NPlusOneDetector.new(config.n_plus_one_threshold)
        @development = config.environment_name == "development"
        @profile_path = config.profile_path
        @sql_hooked = false
      end

      # @param env [Hash] the Rack env.
      # @return [Array(Integer, Hash, #each)] the response.
      def call(env)
        return dashboard(env) if env["PATH_INFO"].to_s.start_with?(@profile_path)
        return Profiler.memory_profile_class.new(@app, @config).call(env) if memory?(env)
        measure(env)
      end

      private

      def dashboard(env)
        dashboard = Profiler.dashboard_class
        return dashboard.new(@store, @config).call(env) if dashboard
        [404, { "content-type" => "text/plain" }, [UNAVAILABLE]]
      end

      def memory?(env)
        query = env["QUERY_STRING"]
        !query.nil? && query.include?("__heron=memory") && !Profiler.memory_profile_class.nil?
      end

      def measure(env)
        @sql_hooked ||= Profiler.instrumentation.install
        profile = start(env)
        status, headers, body = @app.call(env)
        headers = returned(profile, env, status, headers)
        [status, headers, Rack::BodyProxy.new(body) { complete(profile, status) }]
      rescue Exception # rubocop:disable Lint/RescueException
        complete(profile, 500) if profile
        raise
      end

      def start(env)
        now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        profile = RequestProfile.new(env["REQUEST_METHOD"], env["PATH_INFO"], env["QUERY_STRING"],
                                     queue_ms: QueueTime.measure(env, now), started: env["heron.request_start"], now: now)
        @accounting.open(profile)
      end

      def returned(profile, env, status, headers)
        headers = headers.dup if headers.frozen? # an app sharing a frozen Hash: add to a copy
        @accounting.checkpoint
        profile.app_returned(status)
        ServerTiming.append(headers, profile)
        headers[ID_HEADER] = profile.id
        report_n_plus_one(profile, headers)
        time_after_reply(profile, env["rack.after_reply"])
        headers
      end

      def report_n_plus_one(profile, headers)
        findings = profile.n_plus_one = @detector.detect(profile.queries)
        return if findings.empty?
        headers[N_PLUS_ONE_HEADER] = @detector.header(findings) if @development
        message = @detector.message(findings, profile.to_s)
        @logger ? @logger.warn(message.chomp) : @config.error_io.write(message)
        raise NPlusOneError.new(findings, message) if Profiler.raise_on_n_plus_one?
      end

      def time_after_reply(profile, callables)
        return unless callables.is_a?(Array)
        return profile.after_reply_ms = 0.0 if callables.empty?
        AfterReplyTimer.new(callables) { |ms| profile.after_reply_ms = ms }.wrap
      end

      def complete(profile, status)
        return if profile.finished?
        profile.status ||= status
        profile.finished
        @accounting.close(profile)
        profile.n_plus_one = @detector.detect(profile.queries)
        profile.trim_queries
        @store.push(profile)
      end
    end
  end
end
