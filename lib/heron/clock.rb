# frozen_string_literal: true

require_relative "native"

Heron::Native.load("heron_ext") # defines Clock.now (ext/heron/heron_clock.c)

module Heron
  # The server's one clock for deadlines, timeouts and durations: CLOCK_MONOTONIC, which wall
  # time adjustments (NTP, a changed date) do not move. Call {.now}, or include the module for a
  # private `now`.
  #
  # @!method self.now
  #   @return [Float] seconds on the monotonic clock (the origin is arbitrary: compare, do not show).
  module Clock
  end
end
