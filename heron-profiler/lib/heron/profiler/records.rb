# frozen_string_literal: true

require_relative "peers"
require_relative "route_stats"

module Heron
  module Profiler
    # What the dashboard reads: this process's {Store} (the recent ring), its {RouteStats}
    # (per-route figures and slowest records, kept apart from the ring) and, in cluster mode,
    # every other worker's through {Peers}, so whichever worker answers shows every worker's
    # records and resolves every `server-timing` id. Records from other workers arrive with
    # string keys (the dashboard symbolizes them).
    class Records
      # @return [Store] this process's own store.
      attr_reader :local

      # @param local [Store] this process's recent records.
      # @param routes [RouteStats, nil] this process's per-route figures.
      # @param peers [Peers, nil] the other workers (nil: a single process).
      def initialize(local, routes = nil, peers = nil)
        @local = local
        @routes = routes
        @peers = peers
      end

      # @param limit [Integer, nil] at most this many.
      # @return [Array<Hash>] the most recent records of every process, newest first.
      def recent(limit = nil)
        records = @local.recent(limit)
        return records unless @peers
        records += @peers.recent(limit || @local.capacity)
        records = records.sort_by { |record| -(record[:started_at] || record["started_at"]).to_f }
        limit ? records.first(limit) : records
      end

      # @param id [String] a record id.
      # @return [Hash, nil] the record, from the ring or a route's slowest, in whichever worker
      #   measured it.
      def find(id)
        @local.find(id) || @routes&.find(id) || @peers&.find(id)
      end

      # @return [Array<Hash>] per-route rows of every process (see {RouteStats.merge}).
      def routes
        RouteStats.merge([Array(@routes&.export)] + Array(@peers&.routes))
      end

      # @return [Array<Hash>] this process's own per-route figures, for another worker.
      def export_routes
        Array(@routes&.export)
      end
    end
  end
end
