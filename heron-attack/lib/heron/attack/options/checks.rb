# frozen_string_literal: true

require_relative "../usage_error"

module Heron
  module Attack
    class Options
      # The argument checks that several option groups share: a duration ("500ms", "10s", "2m")
      # and a positive count, each with the one wording every option uses.
      module Checks
        # @param text [String] "10", "10s", "500ms" or "2m".
        # @return [Float] seconds.
        # @raise [UsageError] when the text is not such a duration.
        def self.seconds(text)
          match = text.match(/\A(\d+(?:\.\d+)?)(ms|s|m)?\z/) or raise UsageError, "bad duration #{text.inspect}"
          match[1].to_f * { "ms" => 0.001, "m" => 60.0 }.fetch(match[2], 1.0)
        end

        # @param name [Symbol] the option, without its dashes.
        # @param value [Integer]
        # @return [void]
        # @raise [UsageError] unless value is positive.
        def self.positive!(name, value)
          raise UsageError, "--#{name} must be a positive integer" unless value.positive?
        end
      end
    end
  end
end
