# frozen_string_literal: true

require_relative "../extension"

module Heron
  module Profiler
    class RouteStats
      # One route's figures: how many requests, their total times (the last {SAMPLES}, for the
      # percentiles), the longest, the statements they ran, and the {SLOWEST} records in full.
      #
      # Every profiled request adds to one, so the figures and `add(profile)` are in C
      # (ext/heron_profiler/profiler_route_stats_route.c, with `new(name)`, `name`, `count`,
      # `queries`, `max_ms`, `samples` and `slowest`); this file adds what the dashboard reads.
      class Route
        # @param id [String] a record id.
        # @return [Hash, nil] a copy of one of the slowest records.
        def find(id)
          slowest.find { |record| record[:id] == id }&.dup
        end

        # @return [Hash] what {RouteStats.merge} adds up (and another worker sends as JSON).
        def export
          { route: name, count: count, queries: queries, max_ms: max_ms, samples: samples,
            slowest: slowest.map { |record| record.except(:queries) } }
        end

        # Called from C (`add`) with the record of a request slower than the kept ones; public so
        # that C calls no private method, and not meant for other callers.
        # @param record [Hash] the request's record.
        # @return [void]
        def keep(record)
          slowest << record
          slowest.sort_by! { |kept| -kept[:total_ms].to_f }
          slowest.pop if slowest.size > SLOWEST
        end
      end
    end
  end
end
