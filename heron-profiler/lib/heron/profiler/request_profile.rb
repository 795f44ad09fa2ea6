# frozen_string_literal: true

require_relative "extension"

module Heron
  module Profiler
    # Everything measured about one request while it runs. {FiberAccounting} charges the time its
    # fibers held the reactor (and, on CPU-sampled requests, thread CPU time), allocations and GC
    # runs to it between fiber switches; the SQL hooks add {Query}s; the
    # {Middleware} stamps the times. {#to_h} is the record the {Store} keeps.
    #
    # The stamps, counters and the hot methods (`new`, `app_returned`, `finished`, `id`,
    # `server_timing`, `add_query`, the readers) are in C, in
    # ext/heron/profiler_request_profile.c, where each is documented: every profiled request
    # runs them, and in Ruby they cost as much as a whole hello-world request. This file adds
    # the methods only the log and the dashboard use.
    class RequestProfile
      # Statements a stored record keeps; `db_count` and `db_ms` still count them all.
      KEPT_QUERIES = 1000
      # Query shapes counted for a record that ran more statements than it keeps.
      KEPT_SHAPES = 100
      # Distinct custom step names a request keeps; later names are added up under {OTHER_STEP}.
      KEPT_STEPS = 16
      OTHER_STEP = "other-steps"
      # Server-Timing names of the profiler's own entries, which a step name may not take.
      RESERVED = %w[app db queue cpu gc alloc heron].freeze

      # Adds a custom step's time (see {Profiler.step}): runs of one name add up.
      # @param name [String, Symbol] the step's name; made an HTTP token of at most 32 bytes.
      # @param ms [Float] how long it took.
      # @return [void]
      def add_step(name, ms)
        steps = ((self.extras ||= {})[:steps] ||= {})
        key = self.class.step_name(name)
        key = OTHER_STEP if !steps.key?(key) && steps.size >= KEPT_STEPS
        timing = (steps[key] ||= [0.0, 0])
        timing[0] += ms
        timing[1] += 1
      end

      # @param name [String, Symbol] a step's name as given.
      # @return [String] the name as a Server-Timing metric name (token characters only, at most
      #   32 bytes, never one of {RESERVED}).
      def self.step_name(name)
        token = name.to_s.gsub(/[^!#$%&'*+\-.^_`|~0-9A-Za-z]+/, "-").byteslice(0, 32).to_s
        token = "step" if token.empty?
        RESERVED.include?(token) ? "step-#{token}"[0, 32] : token
      end

      # @return [Array<Hash>] the custom steps: {name:, ms:, count:}, in the order first run.
      def steps
        Hash(extras && extras[:steps]).map { |name, (ms, count)| { name: name, ms: ms, count: count } }
      end

      # Counts every statement by shape before the list is cut to {KEPT_QUERIES}, so the record's
      # per-shape counts agree with `db_count` and its N+1 counts.
      # @return [void]
      def count_shapes
        groups = queries.group_by(&:normalized)
        rows = groups.map { |shape, list| { normalized: shape, count: list.size, ms: list.sum(&:duration_ms) } }
        (self.extras ||= {})[:shapes] = rows.max_by(KEPT_SHAPES) { |row| [row[:ms], row[:count]] }
      end

      # @return [Array<Hash>, nil] {normalized:, count:, ms:} of every statement, when the record
      #   ran more than it keeps (nil: its queries are all there).
      def shapes
        extras && extras[:shapes]
      end

      # @return [String] "METHOD /path" for log lines.
      def to_s
        "#{request_method} #{path}"
      end

      # @return [Float] epoch seconds the request started (from the monotonic stamp and the
      #   clocks' current offset).
      def started_at
        Process.clock_gettime(Process::CLOCK_REALTIME) - (Process.clock_gettime(Process::CLOCK_MONOTONIC) - started)
      end

      # @return [Hash] the store record (see {Store}).
      def to_h
        { id: id, method: request_method, path: path, query: query, status: status, started_at: started_at,
          total_ms: total_ms, queue_ms: queue_ms, app_ms: app_ms, db_ms: db_ms, db_count: db_count,
          reactor_ms: reactor_ms, cpu_ms: cpu_ms, allocations: allocations, gc_count: gc_count, after_reply_ms: after_reply_ms,
          queries: queries.map(&:to_h), n_plus_one: n_plus_one, steps: steps, shapes: shapes }
      end
    end
  end
end
