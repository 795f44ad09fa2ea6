# frozen_string_literal: true

require "test_helper"

# The scheduler's timer heap (io-event's IO::Event::PriorityHeap, under every `sleep`) with
# Heron::Compat::TimerHeap: no object per sift step, and the same layout as io-event's own sift.
class TimerHeapTest < Minitest::Test
  # A timer: ordered by its time, told apart by its id (ties keep the heap's own order).
  Entry = Struct.new(:time, :id) do
    include Comparable

    def <=>(other) = time <=> other.time
  end

  # io-event's own sift methods, which the compat module is prepended over.
  class OriginalHeap < IO::Event::PriorityHeap
    %i[bubble_up bubble_down].each do |name|
      original = IO::Event::PriorityHeap.instance_method(name)
      original = original.super_method while original.owner != IO::Event::PriorityHeap
      define_method(name) { |index| original.bind_call(self, index) }
    end
  end

  def test_it_is_applied_to_io_events_heap
    assert_includes IO::Event::PriorityHeap.ancestors, Heron::Compat::TimerHeap
  end

  # A timer's removal from a heap of 4,096 (about what 5,000 sleeping requests keep) sifts
  # about 12 levels: 11.4 Arrays per push and pop before, one per swap.
  def test_a_push_and_a_pop_among_thousands_of_timers_allocate_nothing
    heap = IO::Event::PriorityHeap.new
    random = Random.new(1)
    4096.times { |i| heap.push(Entry.new(random.rand, i)) }
    heap.push(Entry.new(2.0, -1)) && heap.pop # warms the call sites
    before = GC.stat(:total_allocated_objects)
    100.times { |i| heap.push(Entry.new(1.0 + random.rand, i)) && heap.pop }
    per_operation = (GC.stat(:total_allocated_objects) - before - 100) / 100.0 # less the Entries
    assert_operator per_operation, :<, 0.1, "objects allocated per push and pop, besides the entry"
  end

  def test_every_push_and_pop_leaves_the_layout_io_events_own_sift_leaves
    ours = IO::Event::PriorityHeap.new
    theirs = OriginalHeap.new
    random = Random.new(2)
    5000.times do |i|
      if random.rand < 0.6
        entry = Entry.new(random.rand(200), i) # many equal times: ties must break the same way
        ours.push(entry)
        theirs.push(entry)
      else
        assert_equal theirs.pop&.id, ours.pop&.id
      end
      assert_equal layout(theirs), layout(ours) if (i % 97).zero?
    end
    assert_equal layout(theirs), layout(ours)
    assert ours.valid?
  end

  private

  def layout(heap) = heap.instance_variable_get(:@contents).map(&:id)
end
