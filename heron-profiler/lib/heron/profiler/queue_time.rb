# frozen_string_literal: true

require "heron/request_start"

module Heron
  module Profiler
    # A proxy's `X-Request-Start` or `X-Queue-Start` header as the profiler reports it: how long
    # the request waited before the application saw it, in milliseconds, counting the hop between
    # the proxy and Heron (the stamp's formats and its clamping are {Heron::RequestStart}'s).
    #
    # The {Middleware} asks it when a request carries such a header and the request's peer is
    # one of `config.trusted_proxies` (any client can send one), and hands the result to the
    # profile; otherwise {RequestProfile.start} measures from the server's own
    # `heron.request_start` (the request's first byte).
    class QueueTime
      # @param header [String] e.g. "t=1700000000.123" or "t=1700000000123456".
      # @param epoch_now [Float] epoch seconds now.
      # @return [Float, nil] ms since the stamp (0 to 600,000), or nil when the header holds no
      #   number or one further back than that.
      def self.from_header(header, epoch_now)
        seconds = RequestStart.seconds_since(header, epoch_now)
        seconds && seconds * 1000.0
      end
    end
  end
end
