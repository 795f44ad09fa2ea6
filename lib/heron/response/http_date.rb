# frozen_string_literal: true

require "time"

module Heron
  module Response
    # The Date header value, formatted once per second rather than once per response.
    class HTTPDate
      def initialize
        @second = nil
        @value = nil
        @line = nil
        @field = nil
      end

      # @return [String] the current time in IMF-fixdate form, e.g. "Sun, 22 Nov 2026 01:02:03 GMT".
      def value
        second = Process.clock_gettime(Process::CLOCK_REALTIME, :second)
        return @value if second == @second
        @second = second
        @line = "date: #{@value = Time.at(second).httpdate.freeze}\r\n".b.freeze
        @value
      end

      # @return [Array(String, String)] the HTTP/2 field, ["date", value] (frozen, made once a second).
      def field
        current = value
        @field = ["date", current].freeze unless @field && @field[1].equal?(current)
        @field
      end

      # @return [String] the whole header line, "date: ...\r\n" (frozen, made once a second).
      def line
        value
        @line
      end
    end
  end
end
