# frozen_string_literal: true

require_relative "heartbeat"
require_relative "mold"
require_relative "parent_death"
require_relative "thread_dump"
require_relative "../launcher/hangup"

module Heron
  class Cluster
    # A {Worker} inside its forked process: runs `on_worker_boot`, loads the app (unless
    # preloaded) and serves on the inherited listeners until signalled, or until the master goes
    # away (EOF on the master-alive pipe, or SIGTERM from PR_SET_PDEATHSIG). With reforking, it
    # listens on its link to the master for the order to become the {Mold}, and then, once its
    # server has stopped, forks the next workers from its warmed memory.
    class WorkerProcess
      # @return [Integer] the worker's index.
      attr_reader :index

      # @param index [Integer]
      # @param config [Configuration]
      # @param logger [Log::Logger]
      # @param listeners [Array<BasicSocket>]
      # @param app [#call, nil] the preloaded app, or nil to load it here.
      # @param exporter [Metrics::ClusterExporter, nil]
      # @param orders [Socket, nil] its end of its link to the master (reforking only).
      def initialize(index, config, logger, listeners, app, exporter: nil, orders: nil)
        @index = index
        @config = config
        @logger = logger
        @listeners = listeners
        @app = app
        @exporter = exporter
        @orders = orders
      end

      # In a mold: the worker `index` to fork, with this process's warmed app and listeners.
      # @param index [Integer]
      # @param orders [Socket] the new worker's end of its link to the master.
      # @return [WorkerProcess]
      def sibling(index, orders)
        WorkerProcess.new(index, @config, @logger, @listeners, @app, exporter: @exporter, orders: orders)
      end

      # Serves, then exits with the status.
      # @param master [Integer] the master's pid.
      # @param master_alive [IO]
      # @param channel [Channel]
      # @param hooks [Launcher::LogFile, nil]
      # @return [void] never returns.
      def run_forked(master, master_alive, channel, hooks)
        reset_traps
        ParentDeath.watch(master)
        exit(serve(master_alive, channel, hooks))
      end

      private

      # The master's traps write to its self-pipe, closed here: until the worker installs its own,
      # stops take their default action and the master's other signals are ignored.
      def reset_traps
        %w[TERM INT QUIT CHLD].each { |signal| trap(signal, "DEFAULT") }
        %w[USR1 USR2 HUP TTIN TTOU].each { |signal| trap(signal, "IGNORE") }
      end

      def serve(master_alive, channel, hooks)
        boot
        metrics = @exporter&.worker_started(@index)
        server = server(channel, metrics)
        install_signals(server, hooks)
        watch_master(master_alive, server)
        watch_orders(server) if @orders
        Control::WorkerProbe.start(@index) # after the app loaded: the master counts it as booted
        server.run
        @exporter&.worker_stopped(metrics) if metrics
        @mold ? @mold.run(master_alive, channel, hooks) : 0
      rescue StandardError, ScriptError => e
        @logger.error("worker #{@index} failed", e)
        1
      end

      def boot
        Control::ProcessTitle.set("worker #{@index}", @config)
        Log::Logger.worker = @index
        @config.on_worker_boot.each { |hook| hook.arity.zero? ? hook.call : hook.call(@index) }
      end

      def server(channel, metrics)
        heartbeat = Heartbeat.new(channel, @config.worker_timeout)
        @app ||= AppLoader.load(@config) # kept: a worker promoted to mold forks with it
        server = Server.new(@app, @config, logger: @logger, listeners: @listeners, metrics: metrics, heartbeat: heartbeat)
        heartbeat.on_accept_failure = ->(_reactor) { accept_failed(server) }
        server
      end

      # Restart and resize signals are the master's; a worker ignores them when they reach its
      # process group, reopens its log file and reloads TLS certificates on HUP, and logs its
      # threads on SIGURG.
      def install_signals(server, hooks)
        SignalHandler.new(server, actions: {
                            "HUP" => Launcher::Hangup.new(hooks, @listeners, @logger),
                            ThreadDump::SIGNAL => -> { ThreadDump.log(@logger, "worker #{@index} threads:") },
                          }, ignore: %w[USR1 USR2 TTIN TTOU], logger: @logger).install
      end

      def watch_master(master_alive, server)
        Thread.new do
          master_alive.read
          @logger.warn("worker #{@index}: master is gone; draining")
          server.stop(graceful: true)
          exit!(1) if @mold # a mold forks for its master only
        end
      end

      # The master's one order to a worker: `mold`. Its listeners are kept (the server closes its
      # copies as it stops), it drains, and once its server has stopped it runs as the {Mold}.
      def watch_orders(server)
        Thread.new do
          order, = @orders.recvmsg(64)
          next unless order == "mold"
          @logger.info("worker #{@index}: promoted to mold; draining, then forking workers from this process")
          @listeners = @listeners.map(&:dup)
          @mold = Mold.new(self, @orders, @logger, @config)
          server.stop(graceful: true)
        rescue IOError, SystemCallError
          nil
        end
      end

      def accept_failed(server)
        @logger.error("worker #{@index}: an accept loop ended; draining so the master starts a new worker")
        server.stop(graceful: true)
      end
    end
  end
end
