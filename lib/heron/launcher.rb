# frozen_string_literal: true

require_relative "server"
require_relative "cluster"
require_relative "app_loader"
require_relative "signal_handler"
require_relative "control"
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
      control = Control.for_single(@config, @logger, metrics)
      server = Server.new(AppLoader.load(@config), @config, logger: @logger, metrics: metrics).bind
      Control.attach_server(control, server)
      @logger.banner(addresses: server.addresses, mode: "single process, #{server.mode}")
      Control::ProcessTitle.set("single", @config, server.addresses)
      SignalHandler.new(server).install
      server.run
      @logger.info("stopped")
    ensure
      control&.close
    end

    def load_metrics
      require_relative "profiler/metrics"
      Profiler.metrics
    end
  end
end
