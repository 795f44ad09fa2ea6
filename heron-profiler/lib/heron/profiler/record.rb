# frozen_string_literal: true

require_relative "steps"

module Heron
  module Profiler
    # The record Hash the {Store}, the {RouteStats} and the dashboard keep of a finished request.
    class Record
      # @param profile [RequestProfile, #to_h] a request's profile (or another record source).
      # @return [Hash] its record: id, method, path, query, status, started_at, the times and
      #   counters, queries (as Hashes), n_plus_one, steps and shapes.
      def self.of(profile)
        return profile.to_h unless profile.is_a?(RequestProfile)
        { id: profile.id, method: profile.request_method, path: profile.path, query: profile.query, status: profile.status,
          started_at: profile.started_at, total_ms: profile.total_ms, queue_ms: profile.queue_ms, app_ms: profile.app_ms,
          db_ms: profile.db_ms, db_count: profile.db_count, reactor_ms: profile.reactor_ms, cpu_ms: profile.cpu_ms,
          allocations: profile.allocations, gc_count: profile.gc_count, after_reply_ms: profile.after_reply_ms,
          queries: profile.queries.map(&:to_h), n_plus_one: profile.n_plus_one, steps: Steps.of(profile), shapes: profile.shapes }
      end
    end
  end
end
