# frozen_string_literal: true

module Bench
  # Machine-wide CPU time split from /proc/stat, to show how much of a measurement window the
  # hypervisor took away (steal) on a shared virtual machine.
  module CpuStat
    module_function

    # @return [Array<Integer>] user nice system idle iowait irq softirq steal (jiffies)
    def sample
      File.read("/proc/stat")[/^cpu\s+(.*)$/, 1].split.first(8).map(&:to_i)
    end

    # Percentage of all CPU time between two samples that was stolen by the hypervisor.
    def steal_percent(before, after)
      delta = after.zip(before).map { |a, b| a - b }
      total = delta.sum
      total.positive? ? 100.0 * delta[7] / total : 0.0
    end

    # Runs the block and returns [its result, steal %].
    def measure
      before = sample
      result = yield
      [result, steal_percent(before, sample)]
    end
  end
end
