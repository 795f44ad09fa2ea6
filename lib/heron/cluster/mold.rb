# frozen_string_literal: true

require "socket"
require_relative "../clock"

module Heron
  class Cluster
    # A worker promoted by the master (`refork_after`), once its server has stopped: it serves
    # no more, and forks the workers the master orders (`spawn INDEX`, with the new worker's end
    # of its link to the master), each from this process's warmed memory, so what serving built
    # (inline caches, YJIT code, constants loaded on first use, memoised data) is shared
    # copy-on-write instead of rebuilt in every worker. Each worker is forked through a child
    # that exits at once: orphaned, it is adopted by the master (a child subreaper, {Subreaper}),
    # which waits for it and signals it like the workers it forks itself. The mold writes
    # `mold PID` on the channel when it is ready and `adopt INDEX PID` for each worker, and
    # exits on TERM, or when the master closes the link or goes away.
    class Mold
      include Clock

      REPARENT_WAIT = 5.0
      private_constant :REPARENT_WAIT

      # @param worker [WorkerProcess] the promoted worker (its app, listeners and settings).
      # @param orders [Socket] its end of its link to the master.
      # @param logger [Log::Logger]
      # @param config [Configuration]
      def initialize(worker, orders, logger, config)
        @worker = worker
        @orders = orders
        @logger = logger
        @config = config
      end

      # Forks workers as ordered until the link closes.
      # @param master_alive [IO]
      # @param channel [Channel]
      # @param hooks [Launcher::LogFile, nil]
      # @return [Integer] the exit status.
      def run(master_alive, channel, hooks)
        %w[TERM INT QUIT].each { |signal| trap(signal, "DEFAULT") }
        Control::ProcessTitle.set("mold (from worker #{@worker.index})", @config)
        master = Process.ppid
        settle
        channel.note("mold", Process.pid)
        while (index, link = next_order)
          fork_worker(index, link, master, master_alive, channel, hooks) if index
          link&.close
        end
        0
      end

      private

      # What Ruby 3.3's Process.warmup does, before the workers share this memory: a full
      # collection, then compaction, so the live objects sit together and the free slots the
      # workers allocate into (dirtying, and so copying, their pages) are in as few pages as
      # possible.
      def settle
        return Process.warmup if Process.respond_to?(:warmup)
        GC.start(full_mark: true, immediate_sweep: true)
        GC.compact if GC.respond_to?(:compact)
      rescue NotImplementedError
        nil
      end

      # @return [Array(Integer, Socket), nil] the next `spawn INDEX` and its link end; [nil, nil]
      #   for anything else; nil once the master closed the link.
      def next_order
        data, _, _, *controls = @orders.recvmsg(64, 0, nil, scm_rights: true)
        return nil if data.nil? || data.empty?
        link = controls.first&.unix_rights&.first
        index = data[/\Aspawn (\d+)\z/, 1]
        [index&.to_i, link]
      rescue IOError, SystemCallError
        nil
      end

      # The worker is forked from a child that reports its pid and exits, so the worker's parent
      # becomes the master.
      def fork_worker(index, link, master, master_alive, channel, hooks)
        middle = fork do
          pid = fork { serve(index, link, master, master_alive, channel, hooks) }
          channel.note("adopt", index, pid)
          exit!(0)
        end
        Process.wait(middle)
      rescue SystemCallError => e
        @logger.error("mold: forking worker #{index} failed", e)
      end

      def serve(index, link, master, master_alive, channel, hooks)
        @orders.close
        middle = Process.ppid
        deadline = now + REPARENT_WAIT
        sleep(0.005) while Process.ppid == middle && now < deadline
        @worker.sibling(index, link).run_forked(master, master_alive, channel, hooks)
      end
    end
  end
end
