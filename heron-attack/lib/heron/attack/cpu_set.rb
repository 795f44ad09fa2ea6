# frozen_string_literal: true

require "etc"

module Heron
  module Attack
    # The CPUs a process may run on (its affinity), read from Linux's /proc/PID/status
    # (`Cpus_allowed_list: 0-3,6`). Elsewhere, or when the file cannot be read, every CPU the
    # machine reports.
    class CpuSet
      MAX_TEXT = 4096

      # @return [Array<Integer>] the CPU numbers, sorted.
      attr_reader :cpus

      # @param pid [Integer, String] a process id, or "self".
      # @return [CpuSet, nil] nil when the process's status cannot be read.
      def self.of(pid)
        line = File.read("/proc/#{pid}/status")[/^Cpus_allowed_list:\s*(\S+)/, 1]
        line && parse(line)
      rescue SystemCallError
        nil
      end

      # @return [CpuSet] this process's CPUs (every CPU of the machine when /proc says nothing).
      def self.mine
        of("self") || new((0...Etc.nprocessors).to_a)
      end

      # @param text [String] a Linux CPU list such as "0-3,6".
      # @return [CpuSet]
      # @raise [ArgumentError] for text that is not one.
      def self.parse(text)
        raise ArgumentError, "bad CPU list #{text[0, 40].inspect}" if text.size > MAX_TEXT || !text.match?(/\A\d+(-\d+)?(,\d+(-\d+)?)*\z/)
        new(text.split(",").flat_map do |part|
          from, to = part.split("-").map(&:to_i)
          (from..(to || from)).to_a
        end)
      end

      # @param cpus [Array<Integer>]
      def initialize(cpus)
        @cpus = cpus.uniq.sort
      end

      # @return [Integer] how many CPUs.
      def size = @cpus.size

      # @param other [CpuSet] @return [CpuSet] the CPUs in both.
      def &(other) = CpuSet.new(@cpus & other.cpus)

      # @param other [CpuSet] @return [CpuSet] the CPUs in either.
      def |(other) = CpuSet.new(@cpus | other.cpus)

      # @return [String] the Linux list form, e.g. "0-3,6".
      def to_s
        @cpus.slice_when { |a, b| b != a + 1 }.map { |run| run.size > 1 ? "#{run.first}-#{run.last}" : run.first.to_s }.join(",")
      end
    end
  end
end
