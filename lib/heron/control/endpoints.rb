# frozen_string_literal: true

require "json"
require "rack/utils"
require_relative "backtraces"
require_relative "same_origin"

module Heron
  module Control
    # What the control listener answers:
    #
    # - `GET /health/live`: 200 while the process can answer at all.
    # - `GET /health/ready`: 200 once serving, 503 while booting and from the moment a drain
    #   starts (so a load balancer stops sending before the listeners close).
    # - `GET /stats`: the {State#stats} document, JSON.
    # - `GET /metrics`: the Prometheus text format, when metrics are on.
    # - `GET /backtraces`: every thread's backtrace and every reactor's task tree.
    # - `POST /control/ACTION`: sends the master the signal of {ACTIONS}; 202.
    #
    # `/stats`, `/backtraces` and `/control/*` answer only a client that addressed this listener
    # and not another site's web page ({SameOrigin}: 403 otherwise); with `control_token` set,
    # they also need `Authorization: Bearer TOKEN`. Health checks and metrics need neither.
    class Endpoints
      ACTIONS = { "restart" => "USR2", "phased-restart" => "USR1", "reopen-logs" => "HUP", "refork" => "URG",
                  "stop" => "TERM", "halt" => "QUIT" }.freeze
      JSON_TYPE = { "content-type" => "application/json" }.freeze
      TEXT_TYPE = { "content-type" => "text/plain; charset=utf-8" }.freeze

      # @param state [State] readiness and the stats document.
      # @param metrics [#to_prometheus, nil] the registry /metrics renders; nil when metrics are off.
      # @param token [String, nil] the `control_token`.
      # @param pid [Integer] the process the actions signal (the master).
      # @param backtraces [#call] makes the /backtraces report (a cluster master adds its workers').
      def initialize(state, metrics: nil, token: nil, pid: Process.pid, backtraces: -> { Backtraces.render })
        @state = state
        @metrics = metrics
        @token = token
        @pid = pid
        @backtraces = backtraces
      end

      # @param method [String, nil] nil for a malformed request.
      # @param target [String, nil]
      # @param headers [Hash{String => String}] lower-cased names.
      # @param local [Addrinfo, nil] the connection's local address, for {SameOrigin}.
      # @return [Array(Integer, Hash, String)] status, header fields, body.
      def call(method, target, headers, local = nil)
        return text(400, "Bad Request\n") unless method
        route(method, target.split("?", 2).first, headers, SameOrigin.new(local))
      rescue StandardError => e
        text(500, "#{e.class}: #{e.message}\n")
      end

      private

      def route(method, path, headers, origin)
        case path
        when "/health/live" then read(method) { text(200, "live\n") }
        when "/health/ready" then read(method) { ready }
        when "/metrics" then read(method) { metrics }
        when "/stats" then read(method) { guarded(headers, origin) { [200, JSON_TYPE, "#{JSON.pretty_generate(@state.stats)}\n"] } }
        when "/backtraces" then read(method) { guarded(headers, origin) { text(200, @backtraces.call) } }
        when %r{\A/control/([a-z-]+)\z} then action(method, Regexp.last_match(1), headers, origin)
        else text(404, "Not Found: try /health/ready, /stats or /metrics\n")
        end
      end

      def read(method)
        %w[GET HEAD].include?(method) ? yield : text(405, "Method Not Allowed\n", "allow" => "GET, HEAD")
      end

      def ready
        status = @state.status
        text(status == "ready" ? 200 : 503, "#{status}\n")
      end

      def metrics
        return text(404, "metrics are off (turn them on with `metrics true`)\n") unless @metrics
        [200, { "content-type" => Metrics::TextFormat::CONTENT_TYPE }, @metrics.to_prometheus + @state.capacity_metrics]
      end

      def action(method, name, headers, origin)
        signal = ACTIONS[name] or return text(404, "unknown action #{name}; one of #{ACTIONS.keys.join(', ')}\n")
        return text(405, "Method Not Allowed: use POST\n", "allow" => "POST") unless method == "POST"
        guarded(headers, origin) do
          Process.kill(signal, @pid)
          text(202, "sent SIG#{signal} to #{@pid}#{" [#{@state.tag}]" if @state.tag}\n")
        end
      end

      # A request with the right token skips only the Host check (a page cannot know the token,
      # and port forwarding or NAT changes the address a client names); never the cross-site one.
      def guarded(headers, origin)
        authorized = @token && Rack::Utils.secure_compare(headers["authorization"].to_s.delete_prefix("Bearer "), @token)
        refusal = origin.refusal(headers, host: !authorized) and return text(403, "Forbidden: #{refusal}\n")
        return text(401, "Unauthorized: send Authorization: Bearer TOKEN\n") if @token && !authorized
        yield
      end

      def text(status, body, extra = {})
        [status, TEXT_TYPE.merge(extra), body]
      end
    end
  end
end
