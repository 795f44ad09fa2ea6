# frozen_string_literal: true

module Heron
  class Server
    # The fibers of one reactor sleeping in `Kernel#sleep`, in a FIFO lane per duration. Every
    # sleep of one duration started later ends later, so each lane is in deadline order and the
    # next deadline is the earliest of the lanes' first entries: no heap, and nothing allocated
    # per sleep but its entry. (Async puts each sleep's timer into io-event's priority heap,
    # written in Ruby: with 5,000 requests sleeping, a sleep cost a timer, a Proc and about 13
    # swaps, each of which allocates an Array.) Apps sleep for few distinct durations; past
    # {MAX_LANES} of them at once, {#add} declines and the caller sleeps the usual way.
    class SleepLanes
      # Distinct durations kept at once.
      MAX_LANES = 16

      def initialize
        @lanes = {} # duration => [[deadline, fiber or nil once woken or cancelled], ...]
      end

      # @param duration [Numeric] seconds, positive.
      # @param fiber [Fiber] the sleeping fiber.
      # @param now [Float] monotonic time.
      # @return [Array, nil] the entry (for {#cancel}), or nil when {MAX_LANES} lanes are in use.
      def add(duration, fiber, now)
        lane = @lanes[duration] || (@lanes.size < MAX_LANES ? (@lanes[duration] = []) : nil)
        lane&.push([now + duration, fiber])&.last
      end

      # Forgets an entry whose fiber stopped sleeping some other way (its task was stopped).
      # @param entry [Array] from {#add}.
      # @return [void]
      def cancel(entry)
        entry[1] = nil
      end

      # @return [Float, nil] the earliest deadline of a fiber still asleep, nil when there is none.
      def next_due
        @lanes.delete_if { |_, lane| drop_woken(lane).empty? }
        earliest = nil
        @lanes.each_value { |lane| earliest = lane.first[0] if earliest.nil? || lane.first[0] < earliest }
        earliest
      end

      # Takes every fiber whose deadline has passed out of its lane.
      # @param now [Float] monotonic time.
      # @return [Array<Fiber>] the fibers to wake, in deadline order within a duration.
      def take_due(now)
        due = []
        @lanes.each_value do |lane|
          while (entry = lane.first) && entry[0] <= now
            lane.shift
            due << entry[1] if entry[1]
            entry[1] = nil
          end
        end
        due
      end

      private

      def drop_woken(lane)
        lane.shift while lane.first && lane.first[1].nil?
        lane
      end
    end
  end
end
