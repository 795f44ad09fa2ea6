# frozen_string_literal: true

module Heron
  # A proxy's `X-Request-Start` / `X-Queue-Start` stamp: `t=<epoch>` in seconds, milliseconds or
  # microseconds, told apart by magnitude as New Relic does. Read by load shedding
  # (`max_queue_time`) and by the profiler's queue time, only when the request's peer is a
  # trusted proxy. The wait is clamped to a sane range: a stamp in the future (clock skew between
  # hosts) counts as 0, and one more than {MAX_SECONDS} in the past is not a queue time a proxy
  # could have produced (every proxy times out long before), so it is ignored.
  module RequestStart
    STAMP = /(\d+(?:\.\d+)?)/
    MAX_SECONDS = 600.0 # 10 minutes

    module_function

    # @param header [String] e.g. "t=1700000000.123" or "t=1700000000123456".
    # @param epoch_now [Float] epoch seconds now.
    # @return [Float, nil] seconds since the stamp (0 to {MAX_SECONDS}), or nil when the header
    #   holds no number or one further back than {MAX_SECONDS}.
    def seconds_since(header, epoch_now)
      stamp = header.to_s[STAMP, 1] or return nil
      waited = epoch_now - to_seconds(stamp.to_f)
      return nil unless waited.finite? && waited <= MAX_SECONDS
      waited.negative? ? 0.0 : waited
    end

    # @param value [Float] an epoch stamp in s, ms or µs.
    # @return [Float] the stamp in seconds.
    def to_seconds(value)
      return value / 1_000_000.0 if value > 1e15
      return value / 1000.0 if value > 1e12
      value
    end
  end
end
