# frozen_string_literal: true

require_relative "hot_restart"
require_relative "pidfile"
require_relative "../systemd/notifier"

module Heron
  class Launcher
    # What happens once the server accepts connections, in single and cluster mode alike: the
    # pidfile is written, the process that hot-restarted into this one is told to drain, and
    # systemd hears READY=1 (with MAINPID= when this process took over from another).
    class Readiness
      # @param pidfile [Pidfile]
      # @param notifier [Systemd::Notifier]
      # @param logger [Log::Logger]
      def initialize(pidfile, notifier, logger)
        @handover = HotRestart.take_ready_pipe
        @previous = Process.ppid if @handover # the master that started this one by a hot restart
        @pidfile = pidfile
        @notifier = notifier
        @logger = logger
      end

      # @return [Array<IO>] descriptors a forked worker must close (the pipe to the old process).
      def ios
        @handover && !@handover.closed? ? [@handover] : []
      end

      # Writes the pidfile again if a worker's exit removed it (see {Pidfile#restore}).
      # @return [void]
      def worker_exited
        @pidfile.restore
      end

      # @param status [String] a one-line status for systemd.
      # @return [void]
      def ready!(status)
        @pidfile.write
        took_over = HotRestart.announce_ready(@handover)
        @pidfile.rewrite_after(@previous) if took_over
        @notifier.ready(status: status, main_pid: took_over ? Process.pid : nil)
        @logger.info(took_over ? "serving; the previous process is draining" : "serving (pid #{Process.pid})")
      end
    end
  end
end
