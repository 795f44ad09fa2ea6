# frozen_string_literal: true

require_relative "calibration"
require_relative "cpu_set"

module Heron
  module Attack
    # `--processes auto`: as many generator processes as the plan's peak rate needs at the
    # rate one process sustained in this machine's calibration (ceil(peak ÷ calibrated)), at
    # least one and at most the CPUs the generator may run on.
    class ProcessCount
      # @return [Integer] the processes chosen. @return [String, nil] a warning when the
      #   calibration asks for more processes than there are CPUs.
      attr_reader :count, :warning
      # @return [String] how the count was chosen.
      attr_reader :note

      # @param calibration [Hash] a saved {Calibration}.
      # @param peak_rate [Float] the plan's highest rate.
      # @param limit [Integer] the most processes allowed.
      def initialize(calibration, peak_rate, limit)
        @calibrated = calibration["rate"].to_f
        raise UsageError, "the calibration sustained no rate at all: --processes auto cannot choose" unless @calibrated.positive?
        cpus = CpuSet.mine.size
        needed = (peak_rate / @calibrated).ceil
        @count = needed.clamp(1, [cpus, limit].min)
        @warning = needed > @count ? too_few(needed, cpus, peak_rate) : nil
        @note = "auto: #{@count} for #{format('%.0f', peak_rate)}/s at #{format('%.0f', @calibrated)}/s per process (calibrated)"
      end

      private

      def too_few(needed, cpus, peak)
        format("--processes auto: %.0f/s needs %d processes at the calibrated %.0f/s each, but the generator may use only " \
               "%d CPU%s: expect lateness", peak, needed, @calibrated, cpus, cpus == 1 ? "" : "s")
      end
    end
  end
end
