# frozen_string_literal: true

module Heron
  module Profiler
    # Runs blocks in a forked child right after the fork (Ruby 3.1's `Process._fork`), for the
    # profiler's per-process parts that must start in each worker of a preloaded cluster.
    # Installed only when such a block is registered, which only cluster-mode profiling does.
    module ForkHook
      @blocks = []

      class << self
        # @yield in each child forked from now on.
        # @return [void]
        def in_child(&block)
          @blocks << block
          Process.singleton_class.prepend(self) unless Process.singleton_class.include?(self)
        end

        # @return [void]
        def forked
          @blocks.each(&:call)
        end
      end

      # @return [Integer] the child's pid in the parent, 0 in the child.
      def _fork
        pid = super
        ForkHook.forked if pid.zero?
        pid
      end
    end
  end
end
