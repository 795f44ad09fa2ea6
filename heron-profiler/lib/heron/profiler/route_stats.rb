# frozen_string_literal: true

require_relative "extension"
require_relative "route_stats/route"
require_relative "record"

module Heron
  module Profiler
    # Per-route figures kept apart from the {Store}'s ring, which any load test flushes: for each
    # route the request count, p50/p95/max total time, mean queries, and its {Route::SLOWEST}
    # slowest records in full (the dashboard links them; {#find} resolves their ids).
    #
    # A route is the method and the path with its id-like segments (all digits, UUIDs, hex of
    # 16 or more characters) written `:id`: `GET /users/42/posts` counts as
    # `GET /users/:id/posts`. At most {MAX_ROUTES} routes are kept; requests of further routes
    # are counted under {OTHER}. The figures are C ({Route}); this class, all Ruby, names the
    # routes and remembers them per path. The middleware's {Meter} asks {#route_for} for the
    # route of a path it has not just added to, and adds to the {Route} itself.
    class RouteStats
      MAX_ROUTES = 200
      OTHER = "(other routes)"
      ID_SEGMENT = %r{/(?:\d+|\h{8}-\h{4}-\h{4}-\h{4}-\h{12}|\h{16,})(?=/|\z)}.freeze
      CACHED_PATHS = 10_000

      # Adds up exports of several processes' stats (see {#export}).
      # @param exports [Array<Array<Hash>>] each process's {#export} (symbol or string keys).
      # @return [Array<Hash>] one row per route: route, count, p50_ms, p95_ms, max_ms,
      #   mean_queries, slowest (records without queries); busiest routes first.
      def self.merge(exports)
        rows = exports.flatten.map { |row| row.transform_keys(&:to_sym) }.group_by { |row| row[:route] }
        rows.map { |route, list| summary(route, list) }.sort_by { |row| [-row[:count], row[:route]] }
      end

      # @return [Hash] one route's merged row.
      def self.summary(route, list)
        count = list.sum { |row| row[:count] }
        samples = list.flat_map { |row| row[:samples] }.sort
        { route: route, count: count, p50_ms: percentile(samples, 0.5), p95_ms: percentile(samples, 0.95),
          max_ms: list.map { |row| row[:max_ms].to_f }.max, mean_queries: list.sum { |row| row[:queries] }.fdiv(count),
          slowest: list.flat_map { |row| row[:slowest] }.sort_by { |record| -record.fetch(:total_ms) { record["total_ms"] }.to_f }.first(Route::SLOWEST) }
      end

      # @return [Float, nil] the nearest-rank percentile of sorted samples.
      def self.percentile(sorted, fraction)
        sorted.empty? ? nil : sorted[[(sorted.size * fraction).ceil - 1, 0].max]
      end

      def initialize
        @routes = {}
        @names = {}
      end

      # Adds a finished request to its route's figures, and its record to the route's slowest
      # when it is among them.
      # @param profile [RequestProfile, #request_method, #path, #total_ms, #db_count, #to_h]
      # @return [void]
      def add(profile)
        route = route_for(profile.request_method, profile.path)
        route.keep(Record.of(profile)) if route.add(profile.total_ms.to_f, profile.db_count)
      end

      # @param id [String] a record id.
      # @return [Hash, nil] a copy of a record kept as one of its route's slowest.
      def find(id)
        @routes.each_value do |route|
          record = route.find(id)
          return record if record
        end
        nil
      end

      # @return [Array<Hash>] every route's figures, for {.merge}.
      def export
        @routes.values.map(&:export)
      end

      # The route of a method and path, remembered per path (at most {CACHED_PATHS} per method).
      # @param method [String] the request method.
      # @param path [String, nil] the request path.
      # @return [Route]
      def route_for(method, path)
        by_path = (@names[method] ||= {})
        by_path[path] || begin
          by_path.clear if by_path.size >= CACHED_PATHS
          by_path[path] = start("#{method} #{path.to_s.gsub(ID_SEGMENT, '/:id')}".freeze)
        end
      end

      private

      def start(name)
        @routes[name] || begin
          name = OTHER if @routes.size >= MAX_ROUTES
          @routes[name] ||= Route.new(name)
        end
      end
    end
  end
end
