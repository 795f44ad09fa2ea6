# frozen_string_literal: true

require_relative "../usage_error"
require_relative "../calibration"
require_relative "../process_count"
require_relative "checks"

module Heron
  module Attack
    class Options
      # How many generator processes send the load (--processes N or auto), and the calibration
      # that auto reads and --calibrate writes (--calibrate, --calibration).
      class Processes
        MAX = 256

        # @return [Integer, :auto] generator processes (a number once {#check!} chose for auto).
        attr_reader :count
        # @return [ProcessCount, nil] how --processes auto chose (set by {#check!}).
        attr_reader :auto
        # @return [Boolean] --calibrate: measure one process's ceiling instead of attacking.
        attr_reader :calibrate

        # Starts from one process and the default calibration file.
        def initialize
          @count = 1
          @calibrate = false
        end

        # Defines --processes, --calibrate and --calibration.
        # @param parser [OptionParser]
        # @return [void]
        def define(parser)
          parser.on("--processes N", "generator processes (default 1, at most #{MAX}), or auto (from --calibrate)") do |v|
            @count = v == "auto" ? :auto : Integer(v, exception: false) || raise(UsageError, "--processes takes a number or auto, not #{v.inspect}")
          end
          parser.on("--calibrate", "measure the highest rate one process sustains here (lateness p99 < 10ms); see docs") { @calibrate = true }
          parser.on("--calibration FILE", "where --calibrate writes and --processes auto reads (default #{Calibration.path.sub(Dir.home, '~')})") do |v|
            @calibration = v
          end
        end

        # @return [String] where the calibration is written (--calibrate) and read (--processes auto).
        def calibration
          @calibration || Calibration.path
        end

        # Chooses the count for auto from the calibration, and checks it.
        # @param peak_rate [Float] the plan's highest rate.
        # @return [void]
        # @raise [UsageError]
        def check!(peak_rate)
          if @count == :auto
            @auto = ProcessCount.new(Calibration.load(calibration), peak_rate, MAX)
            @count = @auto.count
          end
          Checks.positive!(:processes, @count)
          raise UsageError, "--processes must be at most #{MAX}" if @count > MAX
        end
      end
    end
  end
end
