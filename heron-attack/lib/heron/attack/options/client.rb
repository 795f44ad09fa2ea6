# frozen_string_literal: true

require_relative "../usage_error"
require_relative "checks"

module Heron
  module Attack
    class Options
      # How the client talks to the server: the per-request --timeout, --[no-]keepalive, and
      # --http2 with its --max-streams.
      class Client
        MAX_STREAMS = 10_000

        # @return [Float] per-request timeout in seconds. @return [Boolean] reuse connections.
        attr_reader :timeout, :keepalive
        # @return [Boolean] --http2: HTTP/2 (h2 over TLS, h2c with prior knowledge over TCP).
        attr_reader :http2

        # Starts from the defaults: 30 s timeout, keep-alive, HTTP/1.1, 100 streams for --http2.
        def initialize
          @timeout = 30.0
          @keepalive = true
          @http2 = false
          @max_streams = 100
        end

        # Defines --timeout, --[no-]keepalive, --http2 and --max-streams.
        # @param parser [OptionParser]
        # @return [void]
        def define(parser)
          parser.on("--timeout T", "per-request timeout (default 30s)") { |v| @timeout = Checks.seconds(v) }
          parser.on("--[no-]keepalive", "reuse connections (default on)") { |v| @keepalive = v }
          parser.on("--http2", "HTTP/2: h2 by ALPN for https://, h2c with prior knowledge for http://") { @http2 = true }
          parser.on("--max-streams N", Integer, "with --http2: requests at once per connection (default 100)") { |v| @max_streams = v }
        end

        # @return [Integer, nil] requests at once per HTTP/2 connection; nil without --http2.
        def max_streams
          @http2 ? @max_streams : nil
        end

        # @return [Array<String>] the protocols offered by ALPN over TLS.
        def alpn
          @http2 ? ["h2"] : ["http/1.1"]
        end

        # Checks the timeout of an attack.
        # @return [void]
        # @raise [UsageError]
        def check!
          raise UsageError, "--timeout must be positive" unless @timeout.positive?
        end

        # Checks what --http2 needs: keep-alive and a bounded, positive --max-streams.
        # @return [void]
        # @raise [UsageError]
        def http2!
          raise UsageError, "--no-keepalive does not apply to --http2 (streams share connections)" unless @keepalive
          Checks.positive!(:"max-streams", @max_streams)
          raise UsageError, "--max-streams must be at most #{MAX_STREAMS}" if @max_streams > MAX_STREAMS
        end
      end
    end
  end
end
