# frozen_string_literal: true

require "socket"
require_relative "last_beat"
require_relative "worker_process"
require_relative "../clock"

module Heron
  class Cluster
    # One forked worker of a {Cluster}, as the master keeps it: pid, index, its last heartbeat
    # ({LastBeat}), whether it is being retired or replaced, when it is to be killed. In the child
    # it runs as a {WorkerProcess}. With `refork_after` set, each worker also has a link to the
    # master (a SOCK_SEQPACKET pair) on which the master may promote it to the {Mold}, or order
    # the mold to fork it.
    class Worker
      include Clock

      # @return [Integer] the worker's index (0...workers).
      attr_reader :index
      # @return [Integer, nil] its pid once forked.
      attr_reader :pid
      # @return [Float] monotonic time it was forked.
      attr_reader :started_at
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
      def initialize(index, config, logger, listeners, app, exporter: nil)
        @exporter = exporter
        @index = index
        @config = config
        @logger = logger
        @listeners = listeners
        @app = app
        @last_beat = LastBeat.new
        @retiring = false
        @hangup_pending = false
      end

      # @return [Integer] open connections, as its last heartbeat said.
      def connections = @last_beat.connections

      # @return [Integer] how many of those waited parked (without a fiber), as it said.
      def parked = @last_beat.parked

      # @return [Integer] requests it has answered, as it said.
      def served = @last_beat.served

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
          process(orders).run_forked(master, master_alive, channel, hooks)
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

      # Records a heartbeat.
      # @param connections [Integer]
      # @param parked [Integer]
      # @param served [Integer]
      # @return [Boolean] whether it was the first (the worker now serves).
      def beat(connections, parked = 0, served = 0)
        first = @last_beat.record(connections, parked, served)
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
      def serving? = @last_beat.heard?

      # @return [Float] seconds since its last heartbeat, or since its fork while it boots.
      def silent_for = now - (@last_beat.at || @started_at)

      # @return [Hash] what a status reader needs: index, pid, started_at, serving, connections.
      def status
        { index: @index, pid: @pid, started_at: @started_at, serving: serving?, connections: connections,
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

      # What runs in the child, with its end of the link to the master.
      def process(orders)
        WorkerProcess.new(@index, @config, @logger, @listeners, @app, exporter: @exporter, orders: orders)
      end
    end
  end
end
