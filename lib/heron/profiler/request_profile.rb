# frozen_string_literal: true

module Heron
  module Profiler
    # Everything measured about one request while it runs. {FiberAccounting} charges CPU time,
    # allocations and GC runs to it between fiber switches; the SQL hooks add {Query}s; the
    # {Middleware} stamps the times. {#to_h} is the record the {Store} keeps.
    class RequestProfile
      NONE = [].freeze
      KEPT_QUERIES = 1000

      attr_reader :queries, :fibers, :queue_ms, :app_ms, :total_ms, :cpu_ms, :allocations, :gc_count
      attr_reader :db_ms, :db_count
      attr_accessor :status, :n_plus_one, :after_reply_ms
      # @return [Integer, nil] the profile's number in this process (set by {FiberAccounting#open}).
      attr_accessor :number

      # @param method [String] the request method.
      # @param path [String] the request path.
      # @param query [String] the query string.
      # @param queue_ms [Float, nil] time waited before the app, when known.
      # @param started [Float, nil] CLOCK_MONOTONIC seconds the request started (server's first
      #   byte); the app's start when nil.
      # @param now [Float] CLOCK_MONOTONIC seconds the app starts.
      def initialize(method, path, query, queue_ms: nil, started: nil, now: Process.clock_gettime(Process::CLOCK_MONOTONIC))
        @method, @path, @query, @queue_ms = method, path, query, queue_ms
        @app_start = now
        @started = started || now
        @queries = @n_plus_one = NONE
        @fibers = []
        @cpu_ms = @db_ms = 0.0
        @allocations = @gc_count = @db_count = 0
      end

      # Remembers the counters at the moment this profile's fiber was switched in.
      # @param allocated [Integer] GC.stat(:total_allocated_objects).
      # @param gcs [Integer] GC.count.
      # @param cpu [Float] thread CPU time in ms.
      # @return [void]
      def mark(allocated, gcs, cpu)
        @mark_allocated, @mark_gcs, @mark_cpu = allocated, gcs, cpu
      end

      # Charges the counters' growth since {#mark} to this profile.
      # @param allocated [Integer] GC.stat(:total_allocated_objects).
      # @param gcs [Integer] GC.count.
      # @param cpu [Float] thread CPU time in ms.
      # @return [void]
      def charge(allocated, gcs, cpu)
        @allocations += allocated - @mark_allocated
        @gc_count += gcs - @mark_gcs
        @cpu_ms += cpu - @mark_cpu
      end

      # @return [String] the record's id, unique within the process: "<pid>-<number>" in base 36
      #   (the object id until the profile is numbered).
      def id
        @id ||= "#{Process.pid.to_s(36)}-#{(@number || object_id).to_s(36)}"
      end

      # @param query [Query] a statement this request ran.
      # @return [void]
      def add_query(query)
        @queries = [] if @queries.frozen?
        @queries << query
        @db_ms += query.duration_ms
        @db_count += 1
      end

      # Forgets all but the first `limit` queries, so a record kept in the {Store} stays small;
      # {#db_ms} and {#db_count} still cover them all.
      # @param limit [Integer]
      # @return [void]
      def trim_queries(limit = KEPT_QUERIES)
        @queries = @queries.first(limit) if @queries.size > limit
      end

      # Stamps the end of the app's call.
      # @param status [Integer] the response status.
      # @return [void]
      def app_returned(status)
        @status = status
        @app_ms = elapsed_ms(@app_start)
      end

      # Stamps the last byte written (or the body closed).
      # @return [void]
      def finished
        @app_ms ||= elapsed_ms(@app_start)
        @total_ms = elapsed_ms(@started)
      end

      # @return [Boolean] whether {#finished} was called.
      def finished?
        !@total_ms.nil?
      end

      # @return [String] "METHOD /path" for log lines.
      def to_s
        "#{@method} #{@path}"
      end

      # @return [Float] epoch seconds the request started (from the monotonic stamp and the
      #   clocks' current offset).
      def started_at
        Process.clock_gettime(Process::CLOCK_REALTIME) - (Process.clock_gettime(Process::CLOCK_MONOTONIC) - @started)
      end

      # @return [Hash] the store record (see {Store}).
      def to_h
        { id: id, method: @method, path: @path, query: @query, status: @status, started_at: started_at,
          total_ms: @total_ms, queue_ms: @queue_ms, app_ms: @app_ms, db_ms: @db_ms, db_count: @db_count,
          cpu_ms: @cpu_ms, allocations: @allocations, gc_count: @gc_count, after_reply_ms: @after_reply_ms,
          queries: @queries.map(&:to_h), n_plus_one: @n_plus_one }
      end

      private

      def elapsed_ms(since)
        (Process.clock_gettime(Process::CLOCK_MONOTONIC) - since) * 1000.0
      end
    end
  end
end
