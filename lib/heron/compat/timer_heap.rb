# frozen_string_literal: true

require "io/event"
require "io/event/priority_heap"

module Heron
  module Compat
    # io-event 1.11 (the scheduler's timers, under every `sleep` and every IO timeout an app or
    # Heron waits with) keeps its timers in IO::Event::PriorityHeap, whose sift steps swap two
    # slots with `a[i], a[j] = a[j], a[i]`: on Ruby 3.1 each swap allocates a two-element Array.
    # A timer's removal sifts the heap's last element down from the root, about log2(timers)
    # swaps: with 5,000 requests asleep that was 11.5 Arrays per request, 27% of what the
    # process allocated per 1 s sleep request (bench/results/slow_requests.md), and so about
    # as large a share of its minor collections, each of which marks every sleeping fiber.
    #
    # The same sift, moving the sifted element along a hole and storing it once at the end: the
    # same comparisons (`<`, `>`), ties broken the same way, so the heap's layout after every
    # push and pop is the one io-event's own methods give; no objects. Prepended to
    # IO::Event::PriorityHeap only while that class keeps its contents in `@contents` and sifts
    # with these two private methods (see {.apply}).
    module TimerHeap
      # Prepends this module when io-event's heap is the one it was written for.
      # @return [Boolean] whether it is applied.
      def self.apply
        heap = IO::Event::PriorityHeap
        return true if heap.ancestors.include?(self)
        return false unless %i[bubble_up bubble_down].all? { |name| heap.private_method_defined?(name) } &&
                            heap.new.instance_variable_defined?(:@contents)
        heap.prepend(self)
        true
      end

      private

      # Moves the element at `index` up while it is smaller than its parent.
      def bubble_up(index)
        sift(index) do |contents, at, element|
          parent_index = (at - 1) / 2
          parent_index if at.positive? && element < contents[parent_index]
        end
      end

      # Moves the element at `index` down while a child is not larger: the smaller child, the
      # right one when they are equal (as io-event's own).
      def bubble_down(index)
        sift(index) do |contents, at, element|
          child_index = smaller_child(contents, at)
          child_index unless child_index.nil? || element < contents[child_index]
        end
      end

      # Moves the element at `index` along the indices the block gives (given the contents, the
      # hole's index and the element; nil where it stops), each slot on the way taking the one
      # after it, and stores it once where it stops.
      def sift(index)
        contents = @contents
        element = contents[index]
        while (next_index = yield(contents, index, element))
          contents[index] = contents[next_index]
          index = next_index
        end
        contents[index] = element
      end

      # @return [Integer, nil] the index of the smaller child, nil for a leaf.
      def smaller_child(contents, index)
        left_index = (2 * index) + 1
        left = contents[left_index]
        return nil if left.nil?
        right = contents[left_index + 1]
        right.nil? || right > left ? left_index : left_index + 1
      end
    end
  end
end

Heron::Compat::TimerHeap.apply
