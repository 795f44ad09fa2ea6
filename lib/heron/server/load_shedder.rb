# frozen_string_literal: true

require_relative "../request_start"

module Heron
  class Server
    # Answers a request 503 at once, without calling the app, when the process is past what it
    # can serve in time: more than `max_in_flight` requests in the app, or a request that already
    # waited longer than `max_queue_time` (from its connection's accept or its first byte, or from
    # the proxy's `X-Request-Start` when the peer is a trusted proxy). Both are off by default.
    class LoadShedder
      RETRY_AFTER = "1"
      private_constant :RETRY_AFTER

      # @param config [Configuration] reads max_in_flight and max_queue_time.
      def initialize(config)
        @max_in_flight = config.max_in_flight
        @max_queue_time = config.max_queue_time
      end

      # @return [Boolean] whether neither limit is set (the default): nothing to check.
      def off? = @max_in_flight.nil? && @max_queue_time.nil?

      # @param request [Request] a request about to be handed to the app.
      # @param in_flight [Integer] requests in the app in this process, this one included.
      # @param now [Float] the monotonic clock.
      # @return [Array, nil] a Rack response to send instead of calling the app, or nil to admit it.
      def check(request, in_flight, now)
        return refuse("max_in_flight") if @max_in_flight && in_flight > @max_in_flight
        return refuse("max_queue_time") if @max_queue_time && queue_seconds(request, now) > @max_queue_time
        nil
      end

      # @param request [Request]
      # @param now [Float] the monotonic clock.
      # @return [Float] seconds the request has waited: from the trusted proxy's stamp when there
      #   is a plausible one (see RequestStart), else from the server's own start of the request.
      def queue_seconds(request, now)
        stamp = request.env["HTTP_X_REQUEST_START"] if request.env["heron.trusted_proxy"]
        (stamp && RequestStart.seconds_since(stamp, Time.now.to_f)) || now - request.started_at
      end

      private

      def refuse(limit)
        [503, { "content-type" => "text/plain", "retry-after" => RETRY_AFTER, "x-heron-shed" => limit },
         ["Service Unavailable: the server is over its #{limit}; retry later\n"]]
      end
    end
  end
end
