# frozen_string_literal: true

require_relative "channel"
require_relative "worker"

module Heron
  class Cluster
    # Makes and forks the master's workers: each with the listeners, the preloaded app (or none),
    # the metrics exporter and the log file to reopen, the read end of the master-alive pipe
    # (only the master holds its write end, so a worker sees EOF when the master dies) and the
    # {Channel} the workers' heartbeats come back on.
    class Forker
      # @return [Channel] where the workers' heartbeats and the mold's notes come.
      attr_reader :channel

      # @param config [Configuration]
      # @param logger [Log::Logger]
      # @param listeners [Array<BasicSocket>]
      # @param app [#call, nil] the preloaded app, or nil to load it in each worker.
      # @param exporter [Metrics::ClusterExporter, nil]
      # @param log_file [Launcher::LogFile, nil] reopened in a worker on SIGHUP.
      def initialize(config, logger, listeners, app, exporter: nil, log_file: nil)
        @config = config
        @logger = logger
        @listeners = listeners
        @app = app
        @exporter = exporter
        @log_file = log_file
        @alive_reader, @alive_writer = IO.pipe
        @channel = Channel.new
      end

      # @param index [Integer]
      # @param replaces [Worker, nil] the worker it replaces once it serves.
      # @return [Worker] not yet forked.
      def worker(index, replaces: nil)
        worker = Worker.new(index, @config, @logger, @listeners, @app, exporter: @exporter)
        worker.replaces = replaces
        worker
      end

      # Forks `worker`.
      # @param worker [Worker]
      # @param close [Array<IO>] the master's other descriptors, closed in the child at once.
      # @return [Integer] its pid.
      def fork(worker, close: [])
        worker.spawn(@alive_reader, @channel, close: close + ios, hooks: @log_file)
      end

      # @return [Array<IO>] the master's ends: the alive pipe's write end, the channel's read end.
      def ios = [@alive_writer, @channel.reader]
    end
  end
end
