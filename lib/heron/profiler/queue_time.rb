# frozen_string_literal: true

module Heron
  module Profiler
    # Reads a proxy's `X-Request-Start` or `X-Queue-Start` header: how long a request waited
    # before the application saw it, in milliseconds, counting the hop between the proxy and
    # Heron. The header is `t=<epoch>` in seconds, milliseconds or microseconds, told apart by
    # magnitude as New Relic does.
    #
    # {RequestProfile.start} (in C) asks it when a request carries such a header, and otherwise
    # measures from the server's own `heron.request_start` (the request's first byte). The
    # {Middleware} only lets it see the header when the request's peer is one of
    # `config.trusted_proxies`: any client can send one.
    #
    # The result is clamped to a sane range: a stamp in the future (clock skew between hosts)
    # counts as 0 ms, and one more than {MAX_MS} in the past is not a queue time a proxy could
    # have produced (every proxy times out long before), so it is ignored and the server's own
    # measurement is used instead.
    class QueueTime
      STAMP = /(\d+(?:\.\d+)?)/
      MAX_MS = 600_000.0 # 10 minutes

      # @param header [String] e.g. "t=1700000000.123" or "t=1700000000123456".
      # @param epoch_now [Float] epoch seconds now.
      # @return [Float, nil] ms since the stamp (0 to {MAX_MS}), or nil when the header holds
      #   no number or one further back than {MAX_MS}.
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
      # @return [Float, nil] ms, 0.0 when negative (clock skew between hosts), nil past {MAX_MS}
      #   or when not a finite number.
      def self.clamp(ms)
        return nil unless ms.finite? && ms <= MAX_MS
        ms.negative? ? 0.0 : ms
      end
    end
  end
end
