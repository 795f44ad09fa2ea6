# frozen_string_literal: true

require "async"
require_relative "profiler/version"
require_relative "profiler/sql_normalizer"
require_relative "profiler/query"
require_relative "profiler/store"
require_relative "profiler/queue_time"
require_relative "profiler/request_profile"
require_relative "profiler/steps"
require_relative "profiler/record"
require_relative "profiler/cpu_clock"
require_relative "profiler/fiber_accounting"
require_relative "profiler/thread_allocations"
require_relative "profiler/async_task_hook"
require_relative "profiler/after_reply_timer"
require_relative "profiler/profiled_body"
require_relative "profiler/n_plus_one_error"
require_relative "profiler/n_plus_one_detector"
require_relative "profiler/sql/call_site"
require_relative "profiler/sql/recorder"
require_relative "profiler/sql/sequel_hook"
require_relative "profiler/sql/active_record_subscriber"
require_relative "profiler/sql/association_load"
require_relative "profiler/sql/eager_loads"
require_relative "profiler/sql/sequel_association_hook"
require_relative "profiler/sql/sequel_eager_hook"
require_relative "profiler/sql/active_record_association_hook"
require_relative "profiler/sql/active_record_count_hook"
require_relative "profiler/sql/active_record_proxy_count_hook"
require_relative "profiler/sql/active_record_reader_hook"
require_relative "profiler/sql/active_record_preload_hook"
require_relative "profiler/sql/active_record_join_hook"
require_relative "profiler/sql/instrumentation"
require_relative "profiler/records"
require_relative "profiler/options"
require_relative "profiler/middleware"
require_relative "profiler/clock"

module Heron
  # Per-request profiling: timings, SQL, allocations, CPU and GC per request, N+1 detection,
  # Server-Timing headers, and a store of recent requests for the dashboard. See
  # docs/profiling.md.
  module Profiler
    RECORD_ID = /(?:\A|,)\s*heron;desc="([^"]*)"/.freeze

    class << self
      # @param value [Boolean] whether a request with N+1 queries raises {NPlusOneError}
      #   (process-wide; meant for tests).
      attr_writer :raise_on_n_plus_one

      # Wraps a Rack app in the profiling {Middleware}; Heron calls this when `config.profile?`,
      # any other Rack server's app can too (`run Heron::Profiler.wrap(app)`).
      # @param app [#call] the Rack app.
      # @param config [Heron::Configuration, Options, nil] the server's configuration, or the
      #   profiler's options; nil: built from `options`.
      # @param logger [#warn, nil] where N+1 warnings go; nil: the options' logger (Heron passes
      #   its own logger, on config.error_io or config.logger, in config.log_format).
      # @param thread_allocations [Boolean, nil] count allocations per thread
      #   ({ThreadAllocations}, for a server with a thread per request, at tens to a couple of
      #   hundred ns per allocation: bench/thread_allocations.rb); nil: when the app is built outside a fiber scheduler and no Heron
      #   configuration is given (Puma, not Falcon or Heron).
      # @param options [Hash] {Options.keywords} when no config is given.
      # @return [Middleware] a Rack app.
      def wrap(app, config = nil, logger: nil, thread_allocations: nil, **options)
        AsyncTaskHook.install
        instrumentation.install
        ThreadAllocations.enable if thread_allocations.nil? ? thread_per_request?(config) : thread_allocations
        Middleware.new(app, Options.for(config || options), logger: logger)
      end

      # The id of the record a profiled response was measured into: the `heron` entry of its
      # `server-timing` header (`heron;desc="5k2-1x8c"`), which names it in the {Store} and on
      # the dashboard (`/__heron/requests/ID`).
      # @param server_timing [String, Array<String>, nil] the response's `server-timing` value.
      # @return [String, nil] the id, nil when the response was not profiled.
      def record_id(server_timing)
        Array(server_timing).join(", ")[RECORD_ID, 1]
      end

      # @return [Store] this process's store of recent request records.
      def store
        @store ||= Store.new
      end

      # What the dashboard reads: `store` and `routes`; in cluster mode (`config.workers` > 0)
      # also the other workers', after making this worker (or each worker forked from here,
      # when the app is preloaded) answer for its own (see {Peers}).
      # @param store [Store] this process's recent records.
      # @param routes [RouteStats] this process's per-route figures.
      # @param config [Heron::Configuration]
      # @return [Records]
      def records(store, routes, config)
        local = Records.new(store, routes)
        return local unless config.workers.to_i.positive?
        peers = Peers.new(heron_worker? ? Process.ppid : Process.pid)
        share(peers, local)
        Records.new(store, routes, peers)
      end

      # @return [FiberAccounting] this process's per-fiber counters.
      def accounting
        @accounting ||= FiberAccounting.new
      end

      # @return [Sql::Recorder] records queries into the current request's profile.
      def recorder
        @recorder ||= Sql::Recorder.new(accounting)
      end

      # @return [Sql::Instrumentation] the database library hooks.
      def instrumentation
        @instrumentation ||= Sql::Instrumentation.new(recorder)
      end

      # Times a block as a custom step of the request the current fiber works for: shown on the
      # request's page and, when it ends before the app returns, as an entry of its
      # `server-timing` header (`render;dur=12.40`). Runs of one name add up. Outside a profiled
      # request it only runs the block.
      #
      #   Heron::Profiler.step("render") { template.render(user) }
      #
      # @param name [String, Symbol] the step's name (see {Steps.name_for}).
      # @yield the code to time.
      # @return [Object] the block's value.
      def step(name)
        profile = accounting.current or return yield
        started = Profiler::Clock.now
        begin
          yield
        ensure
          Steps.add(profile, name, Profiler::Clock.ms_since(started))
        end
      end

      # @return [Boolean] whether N+1 queries raise {NPlusOneError}.
      def raise_on_n_plus_one?
        @raise_on_n_plus_one == true
      end

      # Raises {NPlusOneError} for N+1 queries while the block runs: requests profiled meanwhile
      # raise when their app returns, and queries the block runs itself outside a request are
      # checked when it ends.
      # @param threshold [Integer] repeats that make an N+1 for the block's own queries.
      # @yield the code to check.
      # @return [Object] the block's value.
      # @raise [NPlusOneError] when the block's own queries hold an N+1.
      def raising_n_plus_one(threshold: 2, &block)
        previous = @raise_on_n_plus_one
        @raise_on_n_plus_one = true
        accounting.current ? yield : scan(NPlusOneDetector.new(threshold), &block)
      ensure
        @raise_on_n_plus_one = previous
      end

      # @return [Class, nil] Heron::Profiler::Dashboard, loaded on first use, nil when absent.
      def dashboard_class
        optional("heron/profiler/dashboard")
        defined?(Heron::Profiler::Dashboard) ? Heron::Profiler::Dashboard : nil
      end

      # @return [Class, nil] Heron::Profiler::MemoryProfile, loaded on first use, nil when absent.
      def memory_profile_class
        optional("heron/profiler/memory_profile")
        defined?(Heron::Profiler::MemoryProfile) ? Heron::Profiler::MemoryProfile : nil
      end

      # @return [Class, nil] Heron::Profiler::Flamegraph, loaded on first use, nil when absent.
      def flamegraph_class
        optional("heron/profiler/flamegraph")
        defined?(Heron::Profiler::Flamegraph) ? Heron::Profiler::Flamegraph : nil
      end

      private

      def scan(detector)
        instrumentation.install
        profile = accounting.open(RequestProfile.new("BLOCK", "raising_n_plus_one", ""))
        result = yield
        findings = detector.detect(profile.queries, Sql::EagerLoads.take(profile))
        raise NPlusOneError.new(findings, detector.message(findings, "block")) unless findings.empty?
        result
      ensure
        accounting.close(profile) if profile
      end

      # In a worker: answer now. In a preloading master: answer in each worker, and remove the
      # directory when the master exits.
      def share(peers, local)
        return peers.serve(local) if heron_worker?
        require_relative "profiler/fork_hook"
        ForkHook.in_child { peers.serve(local) }
        master = Process.pid
        at_exit { peers.remove if Process.pid == master }
      end

      # A server that builds the app outside a fiber scheduler and is not Heron (which passes its
      # configuration) runs requests on threads (Puma); Falcon builds it inside its reactor.
      def thread_per_request?(config)
        config.nil? && Fiber.scheduler.nil?
      end

      # Whether this process is a worker of Heron's cluster mode (which marks its logger in each
      # worker); false under any other server, where `workers` stays 0 unless set.
      def heron_worker?
        defined?(Heron::Log::Logger) ? !Heron::Log::Logger.worker.nil? : false
      end

      def optional(path)
        @tried ||= {}
        return if @tried[path]
        @tried[path] = true
        require path
      rescue LoadError
        nil
      end
    end
  end
end
