# frozen_string_literal: true

require "socket"
require_relative "heartbeat"
require_relative "mold"
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
    # With `refork_after` set, each worker also has a link to the master (a SOCK_SEQPACKET pair)
    # on which the master may promote it to the {Mold}: it drains, stops serving and forks the
    # next workers from its warmed memory.
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
      # @return [Integer] requests it has answered, as it said.
      attr_reader :served
      # @return [Worker, nil] the worker this one replaces once it serves (phased restart, memory).
      attr_accessor :replaces
      # @return [Boolean] whether it was told to drain and is not to be restarted.
      attr_accessor :retiring
      # @return [Float, nil] when the master sends SIGKILL (after a timeout or a drain deadline).
      attr_accessor :kill_at
      # @return [Socket, nil] the master's end of the link to the worker (reforking only).
      attr_reader :link

      # @param index [Integer]
      # @param config [Configuration]
      # @param logger [Log::Logger]
      # @param listeners [Array<BasicSocket>]
      # @param app [#call, nil] the preloaded app, or nil to load it in the worker.
      # @param exporter [Metrics::ClusterExporter, nil] collects the worker's metrics.
      # @param orders [Socket, nil] in a worker a mold forks: its end of its link to the master.
      def initialize(index, config, logger, listeners, app, exporter: nil, orders: nil)
        @exporter = exporter
        @orders = orders
        @index = index
        @config = config
        @logger = logger
        @listeners = listeners
        @app = app
        @connections = 0
        @parked = 0
        @served = 0
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
        orders = open_link
        @pid = fork do
          (close + [@link]).compact.each { |io| io.close unless io.closed? }
          @orders = orders
          run_forked(master, master_alive, channel, hooks)
        end
      ensure
        orders&.close
      end

      # In the master, for a worker the {Mold} forks: the link's far end, to send the mold with
      # the order to fork it.
      # @return [Socket, nil] nil when reforking is off.
      def open_link
        return nil unless @config.refork_after
        @link&.close
        @link, orders = Socket.pair(:UNIX, :SEQPACKET)
        orders
      end

      # In the master: the mold was asked to fork this worker (its boot time counts from now).
      # @return [void]
      def ordered = (@started_at = now)

      # In the master: the mold forked this worker as `pid`.
      # @param pid [Integer]
      # @return [void]
      def adopted(pid)
        @pid = pid
      end

      # In the master: sends an order on the link (`mold`, or to a mold `spawn INDEX` with the
      # new worker's link end).
      # @param order [String]
      # @param io [IO, nil] a descriptor passed with it.
      # @return [Boolean] whether it was sent.
      def order(order, io = nil)
        rights = io ? [Socket::AncillaryData.unix_rights(io)] : []
        @link.sendmsg(order, 0, nil, *rights)
        true
      rescue IOError, SystemCallError
        false
      end

      # In a mold: the worker `index` to fork, with this worker's warmed app and listeners.
      # @param index [Integer]
      # @param orders [Socket] its end of its link to the master.
      # @return [Worker]
      def sibling(index, orders)
        Worker.new(index, @config, @logger, @listeners, @app, exporter: @exporter, orders: orders)
      end

      # In a forked process (by the master, or by a mold through a child that exited): serves,
      # then exits with the status.
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

      # Records a heartbeat.
      # @param connections [Integer]
      # @param parked [Integer]
      # @param served [Integer]
      # @return [Boolean] whether it was the first (the worker now serves).
      def beat(connections, parked = 0, served = 0)
        first = @last_beat_at.nil?
        @last_beat_at = now
        @connections = connections
        @parked = parked
        @served = served
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
        @app ||= AppLoader.load(@config) # kept: a worker promoted to mold forks with it
        server = Server.new(@app, @config, logger: @logger, listeners: @listeners, metrics: metrics, heartbeat: heartbeat)
        heartbeat.on_accept_failure = ->(_reactor) { accept_failed(server) }
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
    end
  end
end
