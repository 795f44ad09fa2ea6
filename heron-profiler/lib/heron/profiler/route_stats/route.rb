# frozen_string_literal: true

require_relative "../extension"

module Heron
  module Profiler
    class RouteStats
      # One route's figures: how many requests, their total times (the last {SAMPLES}, for the
      # percentiles), the longest, the statements they ran, and the {SLOWEST} records in full.
      #
      # Every profiled request adds to one, so the whole class is C
      # (ext/heron_profiler/profiler_route_stats_route.c, where each method is documented):
      # `new(name)`, `add(ms, queries)` (true when the request's record is to be kept),
      # `keep(record)`, `find(id)`, `export`, `name`, `count`, `queries`, `max_ms`, `samples` and
      # `slowest`. {RouteStats} finds the route of a request.
      class Route
      end
    end
  end
end
