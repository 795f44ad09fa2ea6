# frozen_string_literal: true

require_relative "../native"
Heron::Native.load("profiler_ext")

module Heron
  module Profiler
    # Everything measured about one request while it runs. {FiberAccounting} charges CPU time,
    # allocations and GC runs to it between fiber switches; the SQL hooks add {Query}s; the
    # {Middleware} stamps the times. {#to_h} is the record the {Store} keeps.
    #
    # The stamps, counters and the hot methods (`new`, `app_returned`, `finished`, `id`,
    # `server_timing`, `add_query`, the readers) are in C, in
    # ext/heron/profiler_request_profile.c, where each is documented: every profiled request
    # runs them, and in Ruby they cost as much as a whole hello-world request. This file adds
    # the methods only the log and the dashboard use.
    class RequestProfile
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
          cpu_ms: cpu_ms, allocations: allocations, gc_count: gc_count, after_reply_ms: after_reply_ms,
          queries: queries.map(&:to_h), n_plus_one: n_plus_one }
      end
    end
  end
end
