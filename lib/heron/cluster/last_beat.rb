# frozen_string_literal: true

require_relative "../clock"

module Heron
  class Cluster
    # What a worker's last heartbeat said (its open connections, how many of them parked, the
    # requests it answered) and when it came: the master's view of one {Worker}'s load and life.
    class LastBeat
      include Clock

      # @return [Float, nil] monotonic time of the last heartbeat; nil before the first.
      attr_reader :at
      # @return [Integer] open connections.
      attr_reader :connections
      # @return [Integer] how many of those waited parked (without a fiber).
      attr_reader :parked
      # @return [Integer] requests answered.
      attr_reader :served

      def initialize
        @connections = @parked = @served = 0
      end

      # Records a heartbeat.
      # @param connections [Integer] @param parked [Integer] @param served [Integer]
      # @return [Boolean] whether it was the first.
      def record(connections, parked, served)
        first = @at.nil?
        @at = now
        @connections = connections
        @parked = parked
        @served = served
        first
      end

      # @return [Boolean] whether a heartbeat came.
      def heard? = !@at.nil?
    end
  end
end
