# frozen_string_literal: true

require "timeout"
require_relative "http_parser"
require_relative "log/logger"
require_relative "binder"
require_relative "server/env_template"
require_relative "server/reactor_thread"

module Heron
  # A Heron server in one process: the listeners and one or more reactor threads that share
  # them. Used alone (single mode), per worker by {Cluster}, and by the test helpers.
  class Server
    # @return [#call] the Rack app (wrapped by the profiler when profiling is on).
    attr_reader :app
    # @return [Configuration]
    attr_reader :config
    # @return [Log::Logger]
    attr_reader :logger
    # @return [Object, nil] the metrics registry, when metrics are on.
    attr_reader :metrics
    # @return [Array<BasicSocket>] the listeners (after {#bind}).
    attr_reader :listeners
    # @return [Hash] env entries every request starts with.
    attr_reader :env_template
    # @return [#run, nil] run in a task of every reactor once it accepts (e.g. Cluster::Heartbeat).
    attr_reader :heartbeat

    # @param app [#call] a Rack app.
    # @param config [Configuration]
    # @param logger [Log::Logger, nil]
    # @param listeners [Array<BasicSocket>, nil] already-open listeners (a cluster worker's).
    # @param metrics [Object, nil] a metrics registry.
    # @param heartbeat [#run, nil] gets `run(reactor_thread)` in a task of each event loop.
    def initialize(app, config, logger: nil, listeners: nil, metrics: nil, heartbeat: nil)
      @heartbeat = heartbeat
      @config = config
      @logger = logger || Log::Logger.new(config)
      @metrics = metrics
      @app = app
      @binder = Binder.for(config)
      @listeners = listeners
      @env_template = Server::EnvTemplate.build(config)
      @reactors = []
      @ready = Queue.new
      @running = 0
      @draining = false
      @not_accepting = 0
      @listener_lock = Mutex.new
    end

    # Opens the listeners (unless given).
    # @return [Server] self
    # @raise [BindError, ConfigError]
    def bind
      @listeners ||= @binder.bind
      self
    end

    # @return [Array<Integer>] the TCP ports listened on.
    def bound_ports
      Binder.ports(@listeners)
    end

    # @return [Array<String>] the listeners as URLs.
    def addresses
      Binder.addresses(@listeners)
    end

    # @return [String] the concurrency mode, for the banner.
    def mode
      threads = @config.threads
      "#{threads} reactor thread#{'s' if threads > 1}, up to #{@config.max_connections} connections"
    end

    # Serves until {#stop}; returns once every reactor thread has finished.
    # @return [void]
    def run
      bind
      @reactors = Array.new(@config.threads) { Server::ReactorThread.new(self, share) }
      @stop_early&.then { |graceful| @reactors.each { |r| r.stop(graceful: graceful) } }
      @reactors.size == 1 ? @reactors.first.run { started } : run_threads
    ensure
      @binder.close
    end

    # Asks every reactor thread to stop. Safe from any thread and from a trap handler.
    # @param graceful [Boolean] drain in-flight requests first (bounded by shutdown_timeout).
    def stop(graceful: true)
      @draining = true
      @stop_early = graceful if @reactors.empty?
      @reactors.each { |reactor| reactor.stop(graceful: graceful) }
    end

    # @return [Boolean] whether a stop has been asked for (true during `drain_delay` too, while
    #   connections are still accepted): a readiness check should then answer 503.
    def draining? = @draining

    # Called by each reactor thread once it has stopped accepting for a graceful stop; the last
    # one closes the listeners (this process's copies), so new connections are refused at once
    # instead of waiting in the backlog to be reset when the process exits.
    # @return [void]
    def stopped_accepting
      @listener_lock.synchronize do
        @not_accepting += 1
        close_listeners if @not_accepting == @reactors.size
      end
    end

    # Blocks until the server accepts connections.
    # @param timeout [Numeric] seconds.
    # @return [true]
    # @raise [RuntimeError] when it does not start in time.
    def wait_until_running(timeout)
      Timeout.timeout(timeout) { @config.threads.times { @ready.pop } }
      true
    end

    # @return [Boolean] whether every reactor thread accepts connections (what
    #   {#wait_until_running} waits for), asked by whoever must not lag behind it: the control
    #   listener's readiness (a thread woken by {#wait_until_running} could run after the first
    #   requests were served, on a busy machine).
    def running? = @running == @config.threads

    # @return [Integer] open connections across reactor threads.
    def connection_count
      @reactors.sum(&:connection_count)
    end

    # @return [Integer] connections parked without a fiber (see Server::ParkingLot), a subset of
    #   {#connection_count}.
    def parked_count
      @reactors.sum(&:parked_count)
    end

    # @return [Integer] requests in the app (or being answered) across reactor threads.
    def in_flight
      @reactors.sum(&:in_flight)
    end

    # @return [Integer] requests answered so far across reactor threads.
    def requests_served
      @reactors.sum(&:served)
    end

    private

    # Ours are closed by the binder (which also removes unix socket files); a cluster worker's
    # inherited copies are only closed, as the master owns the files.
    def close_listeners
      @binder.close
      @listeners.each { |listener| listener.close unless listener.closed? }
    rescue IOError, SystemCallError
      nil
    end

    def share
      (@config.max_connections.to_f / @config.threads).ceil
    end

    # A reactor thread accepts connections.
    def started
      @listener_lock.synchronize { @running += 1 }
      @ready << true
    end

    def run_threads
      threads = @reactors.map do |reactor|
        Thread.new { reactor.run { started } }
      end
      threads.each(&:join)
    end
  end
end
