# frozen_string_literal: true

module Heron
  module Profiler
    # How long a request waited before the application saw it, in milliseconds.
    #
    # A proxy's `X-Request-Start` or `X-Queue-Start` header (`t=<epoch>` in seconds, milliseconds
    # or microseconds, told apart by magnitude as New Relic does) wins, since it covers the time
    # spent between the proxy and Heron as well. Without one, the server's own
    # `heron.request_start` (monotonic clock, first byte of the request read) is used.
    class QueueTime
      HEADERS = %w[HTTP_X_REQUEST_START HTTP_X_QUEUE_START].freeze
      STAMP = /(\d+(?:\.\d+)?)/

      # @param env [Hash] the Rack env.
      # @param monotonic_now [Float] CLOCK_MONOTONIC seconds when the app is about to start.
      # @param epoch_now [Float, nil] wall-clock epoch seconds at the same moment (read when nil).
      # @return [Float, nil] queue time in ms (never negative), or nil when nothing tells it.
      def self.measure(env, monotonic_now, epoch_now = nil)
        header = env[HEADERS[0]] || env[HEADERS[1]]
        return from_header(header, epoch_now || Process.clock_gettime(Process::CLOCK_REALTIME)) if header
        start = env["heron.request_start"]
        start && clamp((monotonic_now - start) * 1000.0)
      end

      # @param header [String] e.g. "t=1700000000.123" or "t=1700000000123456".
      # @param epoch_now [Float] epoch seconds now.
      # @return [Float, nil] ms since the stamp, or nil when the header holds no number.
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
