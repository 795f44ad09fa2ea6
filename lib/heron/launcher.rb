# frozen_string_literal: true

require_relative "server"
require_relative "cluster"
require_relative "app_loader"
require_relative "signal_handler"
require_relative "restart"
require_relative "serving"

module Heron
  # Starts Heron the way the configuration says: one process (with one or more reactor
  # threads) or a cluster of forked workers. Used by the CLI and the rackup handler.
  class Launcher
    # @param config [Configuration]
    # @param logger [Log::Logger, nil]
    def initialize(config, logger: nil)
      @config = config
      @logger = logger || Log::Logger.new(config)
    end

    # Runs until stopped by a signal.
    # @return [Integer] the exit status: 0 after a clean stop, 1 when start-up failed.
    def run
      Serving.start!(@config)
      @config.workers.positive? ? Cluster.new(@config, @logger).run : single
      Restart.exec_if_requested
      0
    rescue BindError, ConfigError, LoadError, SyntaxError => e
      @logger.error("could not start: #{e.message}")
      1
    end

    private

    def single
      metrics = @config.metrics? ? load_metrics : nil
      server = Server.new(AppLoader.load(@config), @config, logger: @logger, metrics: metrics).bind
      exporter = metrics && start_metrics_server(metrics)
      @logger.banner(addresses: server.addresses, mode: "single process, #{server.mode}")
      SignalHandler.new(server).install
      server.run
      @logger.info("stopped")
    ensure
      exporter&.close
    end

    def load_metrics
      require_relative "profiler/metrics_server"
      Profiler.metrics
    end

    # The Prometheus endpoint runs in a thread of its own, on the control address only.
    def start_metrics_server(metrics)
      exporter = Profiler::MetricsServer.new(@config, metrics).bind
      Thread.new { exporter.run }
      @logger.info("metrics on #{@config.metrics_bind}/metrics")
      exporter
    end
  end
end
