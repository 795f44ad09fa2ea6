# frozen_string_literal: true

module Heron
  module Profiler
    class RouteStats
      # One route's figures: how many requests, their total times (the last {SAMPLES}, for the
      # percentiles), the longest, the statements they ran, and the {SLOWEST} records in full.
      class Route
        SAMPLES = 1000
        SLOWEST = 5

        # @return [String] e.g. "GET /users/:id".
        attr_reader :name
        # @return [Integer] requests counted.
        attr_reader :count

        # @param name [String] the route.
        def initialize(name)
          @name = name
          @count = @queries = 0
          @max_ms = 0.0
          @samples = []
          @slowest = []
        end

        # @param profile [RequestProfile] a finished request of this route.
        # @return [void]
        def add(profile)
          ms = profile.total_ms.to_f
          @count += 1
          @queries += profile.db_count
          @max_ms = ms if ms > @max_ms
          @samples.size < SAMPLES ? @samples << ms : @samples[@count % SAMPLES] = ms
          keep(profile.to_h) if @slowest.size < SLOWEST || ms > @slowest.last[:total_ms].to_f
        end

        # @param id [String] a record id.
        # @return [Hash, nil] a copy of one of the slowest records.
        def find(id)
          @slowest.find { |record| record[:id] == id }&.dup
        end

        # @return [Hash] what {RouteStats.merge} adds up (and another worker sends as JSON).
        def export
          { route: @name, count: @count, queries: @queries, max_ms: @max_ms, samples: @samples.dup,
            slowest: @slowest.map { |record| record.except(:queries) } }
        end

        private

        def keep(record)
          @slowest << record
          @slowest.sort_by! { |kept| -kept[:total_ms].to_f }
          @slowest.pop if @slowest.size > SLOWEST
        end
      end
    end
  end
end
