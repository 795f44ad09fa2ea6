# frozen_string_literal: true

require_relative "parent_death"

module Heron
  class Cluster
    # Linux's PR_SET_CHILD_SUBREAPER for the master of a reforking cluster: a worker the mold
    # forks through a child that exits at once is orphaned, and the kernel gives it to the
    # nearest subreaper above it (the master) instead of to init, so the master waits for it,
    # sees it exit and signals it like any worker it forked itself.
    module Subreaper
      PR_SET_CHILD_SUBREAPER = 36
      private_constant :PR_SET_CHILD_SUBREAPER

      # @return [Boolean] whether this process is now a subreaper (false off Linux or without Fiddle).
      def self.enable
        ParentDeath.prctl&.call(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)&.zero? || false
      end
    end
  end
end
