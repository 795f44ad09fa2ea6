# frozen_string_literal: true

module Heron
  module Profiler
    # Raised when N+1 queries were found and a test asked for it
    # ({Profiler.raise_on_n_plus_one=} or {Profiler.raising_n_plus_one}).
    class NPlusOneError < StandardError
      # @return [Array<Hash>] the findings: {call_site:, normalized:, count:}.
      attr_reader :findings

      # @param findings [Array<Hash>] what {NPlusOneDetector#detect} returned.
      # @param message [String] the text to show.
      def initialize(findings, message)
        @findings = findings
        super(message)
      end
    end
  end
end
