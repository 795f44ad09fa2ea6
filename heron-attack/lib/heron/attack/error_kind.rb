# frozen_string_literal: true

require "async"

module Heron
  module Attack
    # Sorts a failed request's exception into one of the kinds the reports count.
    module ErrorKind
      KINDS = %w[timeout refused reset other].freeze
      RESET = [Errno::ECONNRESET, Errno::EPIPE, Errno::ECONNABORTED, EOFError, IOError].freeze

      # @param error [Exception]
      # @return [String] "timeout", "refused", "reset" or "other".
      def self.of(error)
        case error
        when Async::TimeoutError, Errno::ETIMEDOUT then "timeout"
        when Errno::ECONNREFUSED then "refused"
        when *RESET then "reset"
        else "other"
        end
      end
    end
  end
end
