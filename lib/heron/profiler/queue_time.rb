# frozen_string_literal: true

module Heron
  module Profiler
    # Reads a proxy's `X-Request-Start` or `X-Queue-Start` header: how long a request waited
    # before the application saw it, in milliseconds, counting the hop between the proxy and
    # Heron. The header is `t=<epoch>` in seconds, milliseconds or microseconds, told apart by
    # magnitude as New Relic does.
    #
    # {RequestProfile.start} (in C) asks it when a request carries such a header, and otherwise
    # measures from the server's own `heron.request_start` (the request's first byte).
    class QueueTime
      STAMP = /(\d+(?:\.\d+)?)/

      # @param header [String] e.g. "t=1700000000.123" or "t=1700000000123456".
      # @param epoch_now [Float] epoch seconds now.
      # @return [Float, nil] ms since the stamp (never negative), or nil when the header holds
      #   no number.
      def self.from_header(header, epoch_now)
        stamp = header[STAMP, 1] or return nil
        clamp((epoch_now - to_seconds(stamp.to_f)) * 1000.0)
      end

      # @param value [Float] an epoch stamp in s, ms or µs.
      # @return [Float] the stamp in seconds.
      def self.to_seconds(value)
        return value / 1_000_000.0 if value > 1e15
        return value / 1000.0 if value > 1e12
        value
      end

      # @param ms [Float]
      # @return [Float] ms, or 0.0 when negative (clock skew between hosts).
      def self.clamp(ms)
        ms.negative? ? 0.0 : ms
      end
    end
  end
end
