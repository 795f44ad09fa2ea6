# frozen_string_literal: true

module Heron
  module Profiler
    # A proxy's `X-Request-Start` or `X-Queue-Start` header as the profiler reports it: how long
    # the request waited before the application saw it, in milliseconds, counting the hop between
    # the proxy and the server. The stamp is `t=<epoch>` in seconds, milliseconds or
    # microseconds, told apart by magnitude (as New Relic's agents write it); a stamp in the
    # future (clock skew between hosts) counts as 0, one more than {MAX_MS} back is ignored (every
    # proxy times out long before). Heron's load shedding reads the same header its own way.
    #
    # The {Middleware} asks it when a request carries such a header and the request's peer is
    # one of `config.trusted_proxies` (any client can send one), and hands the result to the
    # profile; otherwise {RequestProfile.start} measures from the server's own
    # `heron.request_start` (the request's first byte).
    class QueueTime
      MAX_MS = 600_000.0
      NUMBER = /(\d+(?:\.\d+)?)/
      # @param header [String] e.g. "t=1700000000.123" or "t=1700000000123456".
      # @param epoch_now [Float] epoch seconds now.
      # @return [Float, nil] ms since the stamp (0 to 600,000), or nil when the header holds no
      #   number or one further back than that.
      def self.from_header(header, epoch_now)
        stamp = header.to_s[NUMBER, 1] or return nil
        waited = epoch_now * 1000.0 - epoch_ms(stamp.to_f)
        return nil unless waited.finite? && waited <= MAX_MS
        [waited, 0.0].max
      end

      # @param value [Float] an epoch stamp in s, ms or µs.
      # @return [Float] it in milliseconds.
      def self.epoch_ms(value)
        return value / 1000.0 if value > 1e15
        return value if value > 1e12
        value * 1000.0
      end
      private_class_method :epoch_ms
    end
  end
end
