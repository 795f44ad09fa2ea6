# frozen_string_literal: true

require_relative "peers"

module Heron
  module Profiler
    # What the dashboard reads in cluster mode: this worker's {Store} and, through {Peers}, every
    # other worker's, so whichever worker answers shows every worker's records and resolves every
    # `server-timing` id. Records from other workers arrive with string keys (the dashboard
    # symbolizes them).
    class ClusterStore
      # @return [Store] this worker's own store.
      attr_reader :local

      # @param local [Store] this worker's records.
      # @param peers [Peers] the other workers.
      def initialize(local, peers)
        @local = local
        @peers = peers
      end

      # @param limit [Integer, nil] at most this many.
      # @return [Array<Hash>] the cluster's most recent records, newest first.
      def recent(limit = nil)
        records = @local.recent(limit) + @peers.recent(limit || @local.capacity)
        records = records.sort_by { |record| -(record[:started_at] || record["started_at"]).to_f }
        limit ? records.first(limit) : records
      end

      # @param id [String] a record id.
      # @return [Hash, nil] the record, from whichever worker measured it.
      def find(id)
        @local.find(id) || @peers.find(id)
      end
    end
  end
end
