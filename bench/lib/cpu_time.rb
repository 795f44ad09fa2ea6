# frozen_string_literal: true

module Bench
  # Busy time of one CPU as the kernel counts it in /proc/stat: user, nice, system, irq, softirq
  # and steal, whoever ran. With the server pinned to that CPU and its packets steered there
  # (bench/lib/netns_link.rb), this is what a server host pays, interrupts included, where a
  # process's own CPU time depends on whether the interrupts found it running or asleep.
  module CpuTime
    TICK = 1.0 / 100 # USER_HZ
    BUSY = [0, 1, 2, 5, 6, 7].freeze # user nice system (idle iowait) irq softirq steal
    private_constant :TICK, :BUSY

    # @param cpu [Integer]
    # @return [Float] busy seconds of that CPU since boot.
    def self.busy_seconds(cpu)
      line = File.foreach("/proc/stat").find { |l| l.start_with?("cpu#{cpu} ") }
      fields = line.split.drop(1).map(&:to_i)
      BUSY.sum { |i| fields[i] } * TICK
    end
  end
end
