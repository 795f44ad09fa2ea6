# frozen_string_literal: true

module Heron
  class Cluster
    # The second line of defence against orphaned workers (the first is the master-alive pipe):
    # Linux's PR_SET_PDEATHSIG, set through Fiddle, has the kernel send the worker SIGTERM (a
    # graceful stop) when its master dies, however it dies. Elsewhere, or without Fiddle, a no-op.
    module ParentDeath
      PR_SET_PDEATHSIG = 1
      private_constant :PR_SET_PDEATHSIG

      # Asks for SIGTERM when the parent dies; if it died already (before the call), stops now.
      # @param master_pid [Integer] the pid of the master that forked this process.
      # @return [Boolean] whether the kernel took the request.
      def self.watch(master_pid)
        armed = prctl&.call(PR_SET_PDEATHSIG, Signal.list.fetch("TERM"), 0, 0, 0)&.zero? || false
        Process.kill("TERM", Process.pid) if Process.ppid != master_pid
        armed
      end

      # @return [Fiddle::Function, nil] libc's prctl, or nil where there is none.
      def self.prctl
        return nil unless RUBY_PLATFORM.include?("linux")
        require "fiddle"
        long = Fiddle::TYPE_LONG
        Fiddle::Function.new(Fiddle.dlopen(nil)["prctl"], [Fiddle::TYPE_INT, long, long, long, long],
                             Fiddle::TYPE_INT)
      rescue LoadError, Fiddle::DLError
        nil
      end
    end
  end
end
