# frozen_string_literal: true

module Heron
  module Attack
    class Schedule
      # One stage: its start (seconds), length, rates at both ends and requests offered before it.
      Stage = Struct.new(:start, :length, :from, :to, :before) do
        # @return [Float] requests this stage offers (fractional).
        def count
          (from + to) * length / 2.0
        end

        # @param n [Float] requests into the stage. @return [Float] seconds into the stage.
        def time_for(n)
          slope = (to - from) / length
          return n / from if slope.abs < 1e-12
          (Math.sqrt([(from * from) + (2 * slope * n), 0.0].max) - from) / slope
        end
      end
    end
  end
end
