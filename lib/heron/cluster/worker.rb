# frozen_string_literal: true

require_relative "heartbeat"
require_relative "parent_death"
require_relative "thread_dump"
require_relative "../launcher/hangup"
require_relative "../clock"

module Heron
  class Cluster
    # One forked worker of a {Cluster}. In the master it is the handle the supervisor keeps
    # (pid, index, heartbeats, whether it is being retired); in the child it runs hooks, loads
    # the app (unless preloaded) and serves on the inherited listeners until signalled, or until
    # the master goes away (EOF on the master-alive pipe, or SIGTERM from PR_SET_PDEATHSIG).
    class Worker
      include Clock

      # @return [Integer] the worker's index (0...workers).
      attr_reader :index
      # @return [Integer, nil] its pid once forked.
      attr_reader :pid
      # @return [Float] monotonic time it was forked.
      attr_reader :started_at
      # @return [Float, nil] monotonic time of its last heartbeat; nil while it boots.
      attr_reader :last_beat_at
      # @return [Integer] open connections, as its last heartbeat said.
      attr_reader :connections
      # @return [Integer] how many of those waited parked (without a fiber), as it said.
      attr_reader :parked
      # @return [Worker, nil] the worker this one replaces once it serves (phased restart, memory).
      attr_accessor :replaces
      # @return [Boolean] whether it was told to drain and is not to be restarted.
      attr_accessor :retiring
      # @return [Float, nil] when the master sends SIGKILL (after a timeout or a drain deadline).
      attr_accessor :kill_at

      # @param index [Integer]
      # @param config [Configuration]
      # @param logger [Log::Logger]
      # @param listeners [Array<BasicSocket>]
      # @param app [#call, nil] the preloaded app, or nil to load it in the worker.
      # @param exporter [Metrics::ClusterExporter, nil] collects the worker's metrics.
      def initialize(index, config, logger, listeners, app, exporter: nil)
        @exporter = exporter
        @index = index
        @config = config
        @logger = logger
        @listeners = listeners
        @app = app
        @connections = 0
        @parked = 0
        @retiring = false
        @hangup_pending = false
      end

      # Forks the worker process.
      # @param master_alive [IO] read end of a pipe only the master holds the write end of.
      # @param channel [Channel] where the worker's heartbeats go.
      # @param close [Array<IO>] the master's own descriptors, closed in the child at once.
      # @param hooks [Launcher::LogFile, nil] the log file, reopened in the worker on SIGHUP.
      # @return [Integer] the pid.
      def spawn(master_alive, channel, close: [], hooks: nil)
        @started_at = now
        master = Process.pid
        @pid = fork do
          close.each { |io| io.close unless io.closed? }
          reset_traps
          ParentDeath.watch(master)
          exit(serve(master_alive, channel, hooks))
        end
      end

      # Records a heartbeat.
      # @param connections [Integer]
      # @param parked [Integer]
      # @return [Boolean] whether it was the first (the worker now serves).
      def beat(connections, parked = 0)
        first = @last_beat_at.nil?
        @last_beat_at = now
        @connections = connections
        @parked = parked
        hangup if first && @hangup_pending
        first
      end

      # Forwards the master's SIGHUP (reopen the log file, reload TLS certificates). A booting
      # worker ignores HUP until it has installed its handlers (before its first heartbeat), so
      # it gets the signal at its first heartbeat instead of losing it: a worker that was booting
      # during a logrotate or a certificate renewal would otherwise keep the old file or
      # certificate until its next restart.
      # @return [void]
      def hangup
        @hangup_pending = !serving?
        signal("HUP") unless @hangup_pending
      end

      # @return [Boolean] whether it has sent a heartbeat (it is serving).
      def serving? = !@last_beat_at.nil?

      # @return [Float] seconds since its last heartbeat, or since its fork while it boots.
      def silent_for = now - (@last_beat_at || @started_at)

      # @return [Hash] what a status reader needs: index, pid, started_at, serving, connections.
      def status
        { index: @index, pid: @pid, started_at: @started_at, serving: serving?, connections: @connections,
          retiring: @retiring }
      end

      # Sends a signal to the worker, ignoring one that already exited.
      # @param signal [String]
      def signal(signal)
        Process.kill(signal, @pid) if @pid
      rescue Errno::ESRCH
        nil
      end

      private

      # The master's traps write to its self-pipe, closed here: until the worker installs its own,
      # stops take their default action and the master's other signals are ignored.
      def reset_traps
        %w[TERM INT QUIT CHLD].each { |signal| trap(signal, "DEFAULT") }
        %w[USR1 USR2 HUP TTIN TTOU].each { |signal| trap(signal, "IGNORE") }
      end

      def serve(master_alive, channel, hooks)
        Control::ProcessTitle.set("worker #{@index}", @config)
        Log::Logger.worker = @index
        @config.on_worker_boot.each { |hook| hook.arity.zero? ? hook.call : hook.call(@index) }
        metrics = @exporter&.worker_started(@index)
        heartbeat = Heartbeat.new(channel, @config.worker_timeout)
        server = Server.new(@app || AppLoader.load(@config), @config, logger: @logger, listeners: @listeners,
                                                                      metrics: metrics, heartbeat: heartbeat)
        heartbeat.on_accept_failure = ->(_reactor) { accept_failed(server) }
        install_signals(server, hooks)
        watch_master(master_alive, server)
        Control::WorkerProbe.start(@index) # after the app loaded: the master counts it as booted
        server.run
        @exporter&.worker_stopped(metrics) if metrics
        0
      rescue StandardError, ScriptError => e
        @logger.error("worker #{@index} failed", e)
        1
      end

      def accept_failed(server)
        @logger.error("worker #{@index}: an accept loop ended; draining so the master starts a new worker")
        server.stop(graceful: true)
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
        end
      end
    end
  end
end
