# frozen_string_literal: true

require_relative "cluster/worker"
require_relative "control"

module Heron
  # The master of forked workers: binds the listeners, optionally loads the app before forking
  # (preload), runs `before_fork`, forks the workers, restarts any that die, and forwards
  # TERM/INT (graceful) and QUIT (immediate) to them.
  class Cluster
    RESPAWN_DELAY = 1.0
    private_constant :RESPAWN_DELAY

    # @param config [Configuration]
    # @param logger [Log::Logger]
    # @param metrics [#worker_restarted, nil]
    def initialize(config, logger, metrics: nil)
      @config = config
      @logger = logger
      @metrics = metrics
      @binder = Binder.for(config)
      @workers = {}
      @signals = []
      @stopping = nil
      @restarts = 0
    end

    # Runs until every worker has exited after a stop signal.
    # @return [void]
    def run
      listeners = @binder.bind
      start_metrics if @config.metrics?
      @control = Control.for_cluster(self, listeners, @config, @logger, @exporter&.aggregate)
      app = @config.preload ? AppLoader.load(@config) : nil
      @logger.banner(addresses: @binder.addresses, mode: mode)
      Control::ProcessTitle.set("master", @config, @binder.addresses)
      @config.before_fork.each(&:call)
      start(listeners, app)
      supervise
    ensure
      @control&.close
      @exporter&.stop
      @binder.close
    end

    # @return [Boolean] whether a stop signal arrived (the control listener's readiness says 503).
    def draining? = !@stopping.nil?

    # @return [Hash] the master's counts for the control listener's stats document.
    def stats
      { workers: @workers.size, worker_pids: @workers.keys, restarts: @restarts }
    end

    private

    def mode
      "cluster, #{@config.workers} workers#{' (preloaded)' if @config.preload}, " \
        "#{@config.threads} reactor thread#{'s' if @config.threads > 1} and up to " \
        "#{@config.max_connections} connections each"
    end

    # Workers publish their counters to a shared directory; the master serves the totals.
    def start_metrics
      require_relative "profiler/metrics/cluster_exporter"
      @exporter = Profiler::Metrics::ClusterExporter.new(@config).start
      @metrics ||= @exporter.local
    end

    def start(listeners, app)
      @alive_reader, @alive_writer = IO.pipe
      @wake_reader, @wake_writer = IO.pipe
      @template = ->(index) { Worker.new(index, @config, @logger, listeners, app, exporter: @exporter) }
      @config.workers.times { |index| spawn(index) }
      %w[TERM INT QUIT].each { |signal| trap(signal) { wake(signal) } }
      trap("CHLD") { wake("CHLD") }
    end

    def spawn(index)
      worker = @template.call(index)
      worker.spawn(@alive_reader)
      @workers[worker.pid] = worker
    end

    def wake(signal)
      @signals << signal
      @wake_writer.write_nonblock(".", exception: false)
    end

    def supervise
      until @stopping && @workers.empty?
        @wake_reader.wait_readable(@stopping ? 0.1 : 1.0)
        @wake_reader.read_nonblock(64, exception: false)
        handle(@signals.shift) until @signals.empty?
        reap
        force_stop if @stopping && monotonic > @deadline
      end
    end

    def handle(signal)
      return if signal == "CHLD"
      graceful = signal != "QUIT" && !@stopping
      @stopping = true
      @binder.close_sockets # the workers hold copies: once they close theirs, connecting is refused
      @deadline ||= monotonic + @config.shutdown_timeout + @config.drain_delay + 5
      @logger.info("#{graceful ? 'graceful' : 'immediate'} stop (SIG#{signal})")
      @workers.each_value { |worker| worker.signal(graceful ? "TERM" : "QUIT") }
    end

    def reap
      while (pid, status = Process.wait2(-1, Process::WNOHANG))
        worker = @workers.delete(pid) or next
        @exporter&.worker_exited(pid)
        restart(worker, status) unless @stopping
      end
    rescue Errno::ECHILD
      nil
    end

    def restart(worker, status)
      @logger.warn("worker #{worker.index} (pid #{worker.pid}) exited (#{status.inspect}); restarting")
      @metrics&.worker_restarted
      @restarts += 1
      sleep(RESPAWN_DELAY) if monotonic - worker.started_at < RESPAWN_DELAY
      spawn(worker.index)
    end

    def force_stop
      @workers.each_value { |worker| worker.signal("KILL") }
    end

    def monotonic = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end
end
