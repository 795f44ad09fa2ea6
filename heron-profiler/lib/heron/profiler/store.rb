# frozen_string_literal: true

require "forwardable"
require_relative "extension"
require_relative "record"

module Heron
  module Profiler
    # The last N request records of this process, newest first: a bounded ring buffer. An entry
    # is a record Hash, a {RequestProfile}, or another object answering `id` and `to_h`; the
    # Hash of the last two is only built when someone reads it. Readers get fresh Hashes, so a
    # record changed later never changes under them.
    #
    # The ring itself is C, {Ring} (ext/heron_profiler/profiler_store_ring.c: `new(capacity =
    # 200)`, `push`, `amend(profile)`, `entries(limit = nil)`, `size`, `capacity`, `clear`, which
    # the Store forwards): every profiled request pushes to it (the {Meter} in C), and a C call
    # is atomic under the GVL, so threads need no lock. A
    # RequestProfile is copied into C memory rather than kept (kept, the records reached the
    # old generation and died there, which quadrupled the major GCs; see docs/profiling.md), so
    # what changes after the push (after_reply_ms) reaches the store through `amend`; `entries`
    # rebuilds RequestProfiles from the copies, cutting paths and query strings to
    # MAX_TEXT bytes. The readers below work on an `entries` snapshot.
    class Store
      extend Forwardable

      DEFAULT_SIZE = Ring::DEFAULT_SIZE
      MAX_TEXT = Ring::MAX_TEXT

      # @return [Ring] the C ring the records are in.
      attr_reader :ring

      def_delegators :@ring, :push, :amend, :entries, :size, :capacity, :clear

      # @param capacity [Integer] records kept.
      def initialize(capacity = DEFAULT_SIZE)
        @ring = Ring.new(capacity)
      end

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
      # there. Other entries change themselves (a RequestProfile, through {#amend}).
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
        record.is_a?(Hash) ? record.dup : Record.of(record)
      end
    end
  end
end
