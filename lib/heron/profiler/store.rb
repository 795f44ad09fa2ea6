# frozen_string_literal: true

require_relative "../heron_ext"

module Heron
  module Profiler
    # The last N request records of this process, newest first: a bounded ring buffer. An entry
    # is a record Hash, or an object answering `id` and `to_h` (the middleware stores its
    # {RequestProfile}s, so the Hash is only built when someone reads it). Readers get fresh
    # Hashes, so a record updated later (after_reply_ms) never changes under them.
    #
    # The ring itself is in C (ext/heron/profiler_store.c: `new(capacity = 200)`, `push`,
    # `entries(limit = nil)`, `size`, `capacity`, `clear`): every profiled request pushes to it,
    # and a C call is atomic under the GVL, so threads need no lock. The readers below work on
    # an `entries` snapshot.
    class Store
      # @param limit [Integer, nil] at most this many; nil for all.
      # @return [Array<Hash>] copies of the records, newest first.
      def recent(limit = nil)
        entries(limit).map { |record| copy(record) }
      end

      # @param id [String] a record id.
      # @return [Hash, nil] a copy of the record, or nil when it is unknown or was dropped.
      def find(id)
        (record = lookup(id)) && copy(record)
      end

      # Changes fields of a stored Hash record; does nothing when the record is not (or no longer)
      # there. Object entries change themselves.
      # @param id [String] a record id.
      # @param fields [Hash] keys and new values.
      # @return [Boolean] whether the record was found.
      def update(id, **fields)
        record = lookup(id) or return false
        record.merge!(fields) if record.is_a?(Hash)
        true
      end

      private

      def lookup(id)
        entries.find { |record| id_of(record) == id }
      end

      def id_of(record)
        record.is_a?(Hash) ? record[:id] : record.id
      end

      def copy(record)
        record.is_a?(Hash) ? record.dup : record.to_h
      end
    end
  end
end
