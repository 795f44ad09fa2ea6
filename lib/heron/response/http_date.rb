# frozen_string_literal: true

require "time"

module Heron
  module Response
    # The Date header value, formatted once per second rather than once per response.
    class HTTPDate
      def initialize
        @second = nil
        @value = nil
      end

      # @return [String] the current time in IMF-fixdate form, e.g. "Sun, 22 Nov 2026 01:02:03 GMT".
      def now
        second = Process.clock_gettime(Process::CLOCK_REALTIME, :second)
        return @value if second == @second
        @second = second
        @value = Time.at(second).httpdate.freeze
      end
    end
  end
end
