# frozen_string_literal: true

module Heron
  module Profiler
    # The last N request records of this process, newest first: a bounded, thread-safe ring
    # buffer. An entry is a record Hash, or an object answering `id` and `to_h` (the middleware
    # stores its {RequestProfile}s, so the Hash is only built when someone reads it). Readers
    # get fresh Hashes, so a record updated later (after_reply_ms) never changes under them.
    class Store
      DEFAULT_SIZE = 200

      # @return [Integer] how many records the store keeps.
      attr_reader :capacity

      # @param capacity [Integer] how many records to keep; the oldest is dropped past that.
      def initialize(capacity = DEFAULT_SIZE)
        raise ArgumentError, "capacity must be positive" unless capacity.positive?
        @capacity = capacity
        @lock = Mutex.new
        clear
      end

      # Adds a record, dropping the oldest when full.
      # @param record [Hash, #id] a request record with an :id, or an object with #id and #to_h.
      # @return [Hash, #id] the record.
      def push(record)
        @lock.synchronize do
          @ring[@next] = record
          @next = (@next + 1) % @capacity
          @size += 1 if @size < @capacity
        end
        record
      end

      # @param limit [Integer, nil] at most this many; nil for all.
      # @return [Array<Hash>] copies of the records, newest first.
      def recent(limit = nil)
        @lock.synchronize do
          Array.new([limit || @size, @size].min) { |i| copy(newest(i)) }
        end
      end

      # @param id [String] a record id.
      # @return [Hash, nil] a copy of the record, or nil when it is unknown or was dropped.
      def find(id)
        @lock.synchronize { (record = lookup(id)) && copy(record) }
      end

      # Changes fields of a stored Hash record; does nothing when the record is not (or no longer)
      # there. Object entries change themselves.
      # @param id [String] a record id.
      # @param fields [Hash] keys and new values.
      # @return [Boolean] whether the record was found.
      def update(id, **fields)
        @lock.synchronize do
          record = lookup(id) or return false
          record.merge!(fields) if record.is_a?(Hash)
          true
        end
      end

      # @return [Integer] how many records are held.
      def size
        @lock.synchronize { @size }
      end

      # Forgets every record.
      # @return [void]
      def clear
        @lock.synchronize do
          @ring = Array.new(@capacity)
          @size = @next = 0
        end
      end

      private

      def newest(index)
        @ring[(@next - 1 - index) % @capacity]
      end

      def lookup(id)
        @size.times { |i| return newest(i) if id_of(newest(i)) == id }
        nil
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
