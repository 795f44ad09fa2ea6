# frozen_string_literal: true

module Heron
  class Cluster
    # One forked worker of a {Cluster}: runs hooks, loads the app (unless preloaded) and serves
    # on the inherited listeners until signalled, or until the master goes away.
    class Worker
      # @return [Integer] the worker's index (0...workers).
      attr_reader :index
      # @return [Integer, nil] its pid once forked.
      attr_reader :pid
      # @return [Float] monotonic time it was forked.
      attr_reader :started_at

      # @param index [Integer]
      # @param config [Configuration]
      # @param logger [Log::Logger]
      # @param listeners [Array<BasicSocket>]
      # @param app [#call, nil] the preloaded app, or nil to load it in the worker.
      # @param exporter [Profiler::Metrics::ClusterExporter, nil] collects the worker's metrics.
      def initialize(index, config, logger, listeners, app, exporter: nil)
        @exporter = exporter
        @index = index
        @config = config
        @logger = logger
        @listeners = listeners
        @app = app
      end

      # Forks the worker process.
      # @param master_alive [IO] read end of a pipe the master holds open; EOF means it died.
      # @return [Integer] the pid.
      def spawn(master_alive)
        @started_at = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        @pid = fork { exit(serve(master_alive)) }
      end

      # Sends a signal to the worker, ignoring one that already exited.
      # @param signal [String]
      def signal(signal)
        Process.kill(signal, @pid) if @pid
      rescue Errno::ESRCH
        nil
      end

      private

      def serve(master_alive)
        Control::ProcessTitle.set("worker #{@index}", @config)
        Log::Logger.worker = @index
        @config.on_worker_boot.each { |hook| hook.arity.zero? ? hook.call : hook.call(@index) }
        metrics = @exporter&.worker_started(@index)
        server = Server.new(@app || AppLoader.load(@config), @config, logger: @logger, listeners: @listeners,
                                                                      metrics: metrics)
        SignalHandler.new(server).install
        watch_master(master_alive, server)
        Control::WorkerProbe.start(@index) # after the app loaded: the master counts it as booted
        server.run
        @exporter&.worker_stopped(metrics) if metrics
        0
      rescue StandardError, ScriptError => e
        @logger.error("worker #{@index} failed", e)
        1
      end

      def watch_master(master_alive, server)
        Thread.new do
          master_alive.read
          server.stop(graceful: true)
        end
      end
    end
  end
end
