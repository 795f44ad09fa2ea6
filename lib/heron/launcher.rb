# frozen_string_literal: true

require_relative "server"
require_relative "cluster"
require_relative "app_loader"
require_relative "signal_handler"
require_relative "control"
require_relative "restart"
require_relative "serving"
require_relative "launcher/hangup"
require_relative "launcher/hot_restart"
require_relative "launcher/log_file"
require_relative "launcher/pidfile"
require_relative "launcher/readiness"
require_relative "launcher/ticker"
require_relative "systemd/notifier"

module Heron
  # Starts Heron the way the configuration says: one process (with one or more reactor
  # threads) or a cluster of forked workers. Used by the CLI and the rackup handler.
  #
  # In single mode the process handles TERM/INT/QUIT (stop), USR2 (hot restart: see
  # {Launcher::HotRestart}) and HUP ({Launcher::Hangup}: reopen `log_file`, reload TLS
  # certificates); USR1, TTIN and TTOU are logged and
  # ignored (they need cluster mode). {Cluster} documents the cluster's signals.
  class Launcher
    # @param config [Configuration]
    # @param logger [Log::Logger, nil]
    # @param notifier [Systemd::Notifier]
    def initialize(config, logger: nil, notifier: Systemd::Notifier.new)
      @config = config
      @log_file = LogFile.new(config.log_file).attach(config) if config.log_file
      @logger = logger || Log::Logger.new(config)
      @notifier = notifier
      @pidfile = Pidfile.new(config.pidfile)
    end

    # Runs until stopped by a signal.
    # @return [Integer] the exit status: 0 after a clean stop, 1 when start-up failed.
    def run
      Serving.start!(@config)
      readiness = Readiness.new(@pidfile, @notifier, @logger)
      @config.workers.positive? ? cluster(readiness) : single(readiness)
      Restart.exec_if_requested
      0
    rescue BindError, ConfigError, LoadError, SyntaxError, SystemCallError => e
      @logger.error("could not start: #{e.message}")
      1
    ensure
      @pidfile.delete
    end

    private

    def cluster(readiness)
      Cluster.new(@config, @logger, readiness: readiness, log_file: @log_file, notifier: @notifier).run
    end

    def single(readiness)
      metrics = @config.metrics? ? load_metrics : nil
      control = Control.for_single(@config, @logger, metrics)
      binder = Binder.for(@config)
      ticker = Ticker.new(@config.threads, @notifier) { readiness.ready!("serving") }
      server = Server.new(AppLoader.load(@config), @config, logger: @logger, metrics: metrics,
                                                            listeners: binder.bind, heartbeat: ticker)
      Control.attach_server(control, server)
      serve(server, binder, control)
    ensure
      control&.close
      binder&.close
    end

    def serve(server, binder, control)
      @logger.banner(addresses: server.addresses, mode: "single process, #{server.mode}", control: control.url)
      Control::ProcessTitle.set("single", @config, server.addresses)
      binder.ignored.each { |uri| @logger.info("bind #{uri} ignored: serving the sockets systemd passed") }
      install_signals(server, binder, control)
      server.run
      @restart&.finish(@config.shutdown_timeout + 5)
      @logger.info("stopped")
    end

    def install_signals(server, binder, control)
      actions = { "USR2" => -> { hot_restart(server, binder, control) },
                  "HUP" => Hangup.new(@log_file, binder.listeners, @logger) }
      SignalHandler.new(server, actions: actions, ignore: %w[USR1 TTIN TTOU], logger: @logger,
                                on_stop: ->(_graceful) { stopping }).install
    end

    # Trap context: a stop during a hot restart's boot is passed on to the new process.
    def stopping
      @notifier.stopping
      @restart&.cancel
    end

    # Runs on the signal handler's thread: waits for the new process, then drains this one.
    def hot_restart(server, binder, control)
      return if HotRestart.ignored?(@logger, under_way: @restarting, stopping: server.draining?)
      @restarting = true
      restart = @restart = HotRestart.new(binder, control, @notifier, @logger, role: "process").start
      restart.cancel if server.draining? # a stop that came while it was being spawned
      outcome = restart.conclude(restart.wait, "serving") { server.stop(graceful: true) }
      @restarting = false if outcome == :failed
    ensure
      restart&.close
    end

    def load_metrics
      require_relative "metrics"
      Metrics.current
    end
  end
end
