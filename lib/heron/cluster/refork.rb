# frozen_string_literal: true

require_relative "subreaper"

module Heron
  class Cluster
    # The master's side of reforking (`refork_after`): which worker is promoted to {Mold} and
    # when, the mold once it is ready, and the workers ordered from it until it reports their
    # pids. The {Cluster} asks it and does the rest (the rolling replacement, the respawns).
    class Refork
      # @return [Worker, nil] the mold, once one said it is ready.
      attr_reader :mold
      # @return [Integer] how many molds were promoted.
      attr_reader :generation

      # @param after [Integer] requests a worker answers before the first refork; 0: on demand only.
      # @param logger [Log::Logger]
      def initialize(after, logger)
        @after = after
        @logger = logger
        @generation = 0
        @pending = {}
        @orphans = []
        @enabled = Subreaper.enable
        logger.warn("refork_after: no child subreaper here (Linux only): workers are forked from the master") unless @enabled
      end

      # @param served [Integer] requests the worker answered, from its heartbeat.
      # @return [Boolean] whether that is the automatic refork's moment (once, and only when idle).
      def due?(served)
        @enabled && @after.positive? && @generation.zero? && served >= @after && idle?
      end

      # @return [Boolean] whether no promotion or ordered worker is under way.
      def idle? = @promoting.nil? && @pending.empty?

      # @return [Boolean] whether reforking can happen here.
      def enabled? = @enabled

      # Promotes `worker`: it drains and becomes the next mold.
      # @param worker [Worker]
      # @return [Boolean] whether the order went out.
      def promote(worker)
        return false unless worker.order("mold")
        @promoting = worker
        @logger.info("refork: promoting worker #{worker.index} (pid #{worker.pid}) to mold")
        true
      end

      # A mold said it is ready.
      # @param pid [Integer]
      # @return [Array(Worker, Worker), nil] the new mold and the old one (nil when there was
      #   none); nil when `pid` is not the worker being promoted.
      def ready(pid)
        return nil unless @promoting&.pid == pid
        old = @mold
        @mold = @promoting
        @promoting = nil
        @generation += 1
        @logger.info("refork: mold generation #{@generation} ready (pid #{pid})")
        [@mold, old]
      end

      # Orders `worker` from the mold.
      # @param worker [Worker] not yet forked.
      # @return [Boolean] false when there is no mold or it cannot be reached (fork it yourself).
      def order(worker)
        far = worker.open_link or return false
        worker.ordered
        return false unless @mold&.order("spawn #{worker.index}", far)
        @pending[worker.index] = worker
        true
      ensure
        far&.close
      end

      # The mold forked worker `index` as `pid`.
      # @return [Worker, nil] the worker, now with its pid; nil if none was ordered at that index,
      #   or if it already exited (then it is to be started again: see {#lost}).
      def adopt(index, pid)
        worker = @pending.delete(index) or return nil
        worker.adopted(pid)
        return worker unless @orphans.delete(pid)
        (@lost ||= []) << worker
        nil
      end

      # A process the master waited for that is not one of its workers: the mold, the worker
      # being promoted, or an ordered worker that exited before the mold reported it.
      # @param pid [Integer]
      # @param stopping [Boolean] whether the cluster is stopping (nothing is started again).
      # @return [Array<Worker>] workers to start again (from the master).
      def exited(pid, stopping: false)
        return (stopping ? [] : promotion_failed).tap { @promoting = nil } if @promoting&.pid == pid
        return (stopping ? [] : mold_gone).tap { @mold = nil } if @mold&.pid == pid
        @orphans.shift if @orphans.size > 64
        @orphans << pid
        []
      end

      # @return [Array<Worker>] ordered workers that exited before they were adopted, emptied.
      def lost = (@lost || []).slice!(0..)

      # @return [Array<Socket>] the master's ends of the mold's and promoted worker's links.
      def links = [@mold&.link, @promoting&.link].compact

      # @return [Array<Integer>] the mold's and promoted worker's pids.
      def pids = [@mold&.pid, @promoting&.pid].compact

      # Signals the mold and the worker being promoted (a stop).
      # @param name [String]
      # @return [void]
      def signal(name)
        [@mold, @promoting].compact.each { |worker| worker.signal(name) }
      end

      private

      def promotion_failed
        worker = @promoting
        @promoting = nil
        @logger.warn("refork: worker #{worker.index} (pid #{worker.pid}) exited before it became the mold")
        [worker]
      end

      def mold_gone
        @logger.warn("refork: the mold (pid #{@mold.pid}) exited; workers are forked from the master until the next refork")
        @mold = nil
        @pending.each_value.to_a.tap { @pending.clear }
      end
    end
  end
end
