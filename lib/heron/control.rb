# frozen_string_literal: true

require_relative "config_error"
require_relative "control/server"
require_relative "control/endpoints"
require_relative "control/state"
require_relative "control/state_file"
require_relative "control/handle"
require_relative "control/process_title"
require_relative "control/worker_probe"

module Heron
  # The control address: health checks, stats, `heron ctl`, backtraces and /metrics, on a
  # listener of its own (`control_bind`). See {Control::Server} and {Control::Endpoints}.
  module Control
    # Starts the control listener of a single process before its app loads: live, and booting
    # until {.attach_server}'s server accepts.
    # @param config [Configuration]
    # @param logger [Log::Logger]
    # @param metrics [#to_prometheus, nil]
    # @return [Handle]
    def self.for_single(config, logger, metrics)
      state = State.new(mode: "single", draining: -> { false }, counters: -> { {} }, tag: ProcessTitle.tag(config),
                        max_connections: config.max_connections)
      start(state, config, logger, metrics)
    end

    # Points a {.for_single} handle at the server once the app is loaded; ready once it accepts
    # (asked of the server at each probe, so no request is served while it still says booting).
    # @param handle [Handle]
    # @param server [Heron::Server] bound, not yet running.
    # @return [Handle] handle
    def self.attach_server(handle, server)
      handle.state.attach(draining: -> { server.draining? }, listeners: -> { server.listeners },
                          counters: -> { server_counters(server) }, booted: -> { server.running? })
      handle
    end

    # Starts the control listener of a cluster master, and the directory its workers answer
    # `/backtraces` in ({WorkerProbe}). It is ready once every worker has loaded the app and
    # serves (each one's probe socket exists), and stays ready until a drain starts.
    # @param cluster [#draining?, #stats] the master.
    # @param listeners [Array<BasicSocket>] the app's listeners.
    # @param config [Configuration]
    # @param logger [Log::Logger]
    # @param metrics [#to_prometheus, #snapshot, nil] the workers' totals, when metrics are on.
    # @return [Handle]
    def self.for_cluster(cluster, listeners, config, logger, metrics)
      counters = -> { cluster.stats.merge(metrics ? metric_counters(metrics.snapshot) : {}) }
      booted = -> { WorkerProbe.booted?(cluster.stats[:worker_pids], config.workers) }
      state = State.new(mode: "cluster", draining: -> { cluster.draining? }, listeners: -> { listeners },
                        counters: counters, booted: booted, tag: ProcessTitle.tag(config),
                        max_connections: config.max_connections)
      WorkerProbe.prepare if config.control_bind
      start(state, config, logger, metrics, backtraces: -> { Backtraces.render + WorkerProbe.collect(cluster.stats[:worker_pids]) },
                                            on_close: -> { WorkerProbe.remove })
    end

    # @param state [State]
    # @param backtraces [#call] makes the /backtraces report.
    # @param on_close [#call, nil] runs when the handle is closed.
    # @return [Handle] with a listener unless `control_bind` is nil.
    # @raise [ConfigError] when the listener would be reachable from other hosts without a token.
    def self.start(state, config, logger, metrics, backtraces: -> { Backtraces.render }, on_close: nil)
      return Handle.new(state, nil) unless config.control_bind
      refuse_unauthenticated(config)
      endpoints = Endpoints.new(state, metrics: metrics, token: config.control_token, backtraces: backtraces)
      listener = Server.new(config.control_bind, endpoints, logger, accepting: -> { state.status == "ready" },
                                                                    state_file: StateFile.new(config.control_state),
                                                                    tag: state.tag).start
      logger.info("control on #{listener.url} (/health/ready, /stats#{', /metrics' if metrics})") if listener.url
      Handle.new(state, listener, on_close)
    end

    # A control listener other hosts can reach must have a token: without one anybody who reaches
    # it could stop the server. Heron refuses to start rather than make one up, because a token
    # printed at each start would change at every restart, under every `heron ctl` and script.
    # @param config [Configuration]
    # @return [void]
    # @raise [ConfigError]
    def self.refuse_unauthenticated(config)
      return if config.control_token.to_s != "" || Server.local_only?(config.control_bind)
      raise ConfigError, "control_bind #{config.control_bind} can be reached from other hosts, and control_token " \
                         "is not set: anyone who reaches it could stop this server. Set control_token (for example " \
                         "`control_token ENV.fetch(\"HERON_CONTROL_TOKEN\")`), or bind it to 127.0.0.1 or a unix:// socket"
    end
    private_class_method :refuse_unauthenticated

    # @return [Hash] a single server's live counts.
    def self.server_counters(server)
      { workers: 0, restarts: 0, connections: server.connection_count, parked_connections: server.parked_count,
        in_flight: server.in_flight, requests_served: server.requests_served }
    end

    # @param snapshot [Hash] a metrics snapshot (the workers' total).
    # @return [Hash] the counts it holds.
    def self.metric_counters(snapshot)
      { connections: snapshot["gauges"]["connections_open"], in_flight: snapshot["gauges"]["requests_in_flight"],
        requests_served: snapshot["requests"].values.sum }
    end
  end
end
