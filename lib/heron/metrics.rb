# frozen_string_literal: true

require_relative "metrics/histogram"
require_relative "metrics/text_format"
require_relative "metrics/snapshot_directory"
require_relative "metrics/aggregate"
require_relative "metrics/process_stats"

module Heron
  # The process-wide counters behind the Prometheus endpoint. The server calls the event methods
  # (one short critical section each); {#snapshot} copies everything into a plain, JSON-friendly
  # Hash (with this process's resource use and, in a cluster worker, its index), and {#merge}
  # adds such a Hash's counts in.
  class Metrics
    LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10].freeze
    QUEUE_BUCKETS = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1].freeze
    STATUS_CLASSES = %w[2xx 3xx 4xx 5xx].freeze
    COUNTERS = %w[connections_total after_reply_total worker_restarts_total].freeze
    GAUGES = %w[connections_open requests_in_flight after_reply_backlog].freeze
    GC_KEYS = { "count" => :count, "major" => :major_gc_count, "minor" => :minor_gc_count }.freeze

    # @return [Integer, String, nil] the cluster worker's index, "master", or nil in a single process.
    attr_reader :worker

    # @param live_gc [Boolean] whether {#snapshot} adds this process's own GC.stat counts.
    # @param worker [Integer, String, nil] what {#worker} answers; labels the snapshot's series.
    def initialize(live_gc: true, worker: nil)
      @live_gc = live_gc
      @worker = worker
      @lock = Mutex.new
      @values = Hash.new(0)
      @requests = STATUS_CLASSES.to_h { |name| [name, 0] }
      @latency = STATUS_CLASSES.to_h { |name| [name, Histogram.new(LATENCY_BUCKETS)] }
      @queue = Histogram.new(QUEUE_BUCKETS)
      @gc = Hash.new(0)
    end

    # A client connection was accepted.
    # @return [void]
    def connection_opened
      @lock.synchronize { @values["connections_total"] += 1; @values["connections_open"] += 1 }
    end

    # A client connection was closed.
    # @return [void]
    def connection_closed
      adjust("connections_open", -1)
    end

    # A request's head was parsed and the app is about to be called.
    # @return [void]
    def request_started
      adjust("requests_in_flight", 1)
    end

    # The response to a request was written (or the request was abandoned).
    # @param status [Integer] the response status.
    # @param duration_seconds [Float] from the first request byte to the last response byte.
    # @param queue_seconds [Float, nil] time spent waiting before the app ran; nil when unknown.
    # @return [void]
    def request_finished(status, duration_seconds, queue_seconds = nil)
      name = Metrics.status_class(status)
      @lock.synchronize do
        @values["requests_in_flight"] -= 1 if @values["requests_in_flight"].positive?
        @requests[name] = @requests.fetch(name, 0) + 1
        (@latency[name] ||= Histogram.new(LATENCY_BUCKETS)).observe(duration_seconds)
        @queue.observe(queue_seconds) if queue_seconds
      end
    end

    # An after_reply callback was queued.
    # @return [void]
    def after_reply_enqueued
      adjust("after_reply_backlog", 1)
    end

    # An after_reply callback finished (or failed).
    # @return [void]
    def after_reply_finished
      @lock.synchronize { @values["after_reply_backlog"] -= 1; @values["after_reply_total"] += 1 }
    end

    # The cluster master replaced a worker that died.
    # @return [void]
    def worker_restarted
      adjust("worker_restarts_total", 1)
    end

    # @param name [String] a name from {COUNTERS} or {GAUGES}.
    # @return [Integer] its current value.
    def value(name)
      @lock.synchronize { @values[name] }
    end

    # @return [Hash] a JSON-friendly copy of every metric, with this process's GC counts and
    #   resource use ("process", see {ProcessStats}) and its "worker" index.
    def snapshot
      process = ProcessStats.read
      @lock.synchronize do
        { "pid" => Process.pid, "worker" => @worker, "processes" => 1 + @values["processes"],
          "counters" => pick(COUNTERS), "gauges" => pick(GAUGES), "requests" => @requests.dup,
          "gc" => gc_counts, "latency" => @latency.transform_values(&:to_h), "queue" => @queue.to_h,
          "process" => process }
      end
    end

    # Adds a snapshot (another process's) into this registry.
    # @param snapshot [Hash] a {#snapshot}, possibly read back from JSON.
    # @param gauges [Boolean] false to add only the monotonic counts (a dead worker's last words).
    # @return [self]
    def merge(snapshot, gauges: true)
      @lock.synchronize do
        add_values(snapshot["counters"])
        add_values(snapshot["gauges"].merge("processes" => snapshot["processes"])) if gauges
        merge_requests(snapshot)
        snapshot["gc"].each { |key, count| @gc[key] += count }
      end
      self
    end

    # @return [String] the Prometheus text format (0.0.4) of {#snapshot}.
    def to_prometheus
      TextFormat.new(snapshot).render
    end

    # @param status [Integer] an HTTP status.
    # @return [String] its class: "1xx" .. "5xx".
    def self.status_class(status)
      "#{(status.to_i / 100).clamp(1, 5)}xx"
    end

    # @param number [Numeric]
    # @return [String] the number as Prometheus writes it: integers without ".0".
    def self.format_number(number)
      number.to_f == number.to_i ? number.to_i.to_s : number.to_f.to_s
    end

    private

    def adjust(name, delta)
      @lock.synchronize { @values[name] += delta }
    end

    def pick(names)
      names.to_h { |name| [name, @values[name]] }
    end

    def add_values(values)
      values.each { |name, count| @values[name] += count }
    end

    def merge_requests(snapshot)
      snapshot["requests"].each { |name, count| @requests[name] = @requests.fetch(name, 0) + count }
      snapshot["latency"].each do |name, histogram|
        (@latency[name] ||= Histogram.new(LATENCY_BUCKETS)).merge(histogram)
      end
      @queue.merge(snapshot["queue"])
    end

    def gc_counts
      live = @live_gc ? GC.stat : {}
      GC_KEYS.to_h { |name, key| [name, @gc[name] + live.fetch(key, 0)] }
    end

    class << self
      # @return [Heron::Metrics] this process's registry (created on first use).
      def current
        @current ||= new
      end

      # Starts a fresh registry; a forked worker calls this so it does not report its parent's counts.
      # @param worker [Integer, nil] the worker's index, which labels its series.
      # @return [Heron::Metrics] the new registry.
      def reset(worker: nil)
        @current = new(worker: worker)
      end
    end
  end
end
