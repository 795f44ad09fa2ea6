# frozen_string_literal: true

require_relative "../usage_error"
require_relative "../threshold"

module Heron
  module Attack
    class Options
      # The conditions judged on the run: --fail-if (for CI: exit 3 when one holds) and --knee
      # (the first second where one holds), each at most {MAX}.
      class Thresholds
        MAX = 32

        # @return [Array<Threshold>] the --fail-if conditions. @return [Array<Threshold>] the --knee conditions.
        attr_reader :fail_if, :knee

        # Starts with no conditions.
        def initialize
          @fail_if = []
          @knee = []
        end

        # Defines --knee.
        # @param parser [OptionParser]
        # @return [void]
        def define_knee(parser)
          parser.on("--knee COND", "mark the first second where COND holds, e.g. 'p99>100ms', 'errors>1%' (repeatable)") do |v|
            @knee << knee_condition(v)
          end
        end

        # Defines --fail-if.
        # @param parser [OptionParser]
        # @return [void]
        def define_fail_if(parser)
          parser.on("--fail-if COND", "exit 3 when COND holds, e.g. 'p99>250ms', 'errors>0.1%', 'rate<99%' (repeatable)") do |v|
            @fail_if << condition(@fail_if, "--fail-if", v)
          end
        end

        private

        def knee_condition(text)
          condition = condition(@knee, "--knee", text)
          raise UsageError, "--knee takes p50, p99, max or errors, not #{condition.metric}" unless condition.per_second?
          condition
        end

        def condition(list, option, text)
          raise UsageError, "at most #{MAX} #{option} conditions" if list.size >= MAX
          Threshold.new(text)
        end
      end
    end
  end
end
