# frozen_string_literal: true

require "test_helper"
require "heron/profiler"

class StoreTest < Minitest::Test
  def setup
    @store = Heron::Profiler::Store.new(3)
  end

  def test_recent_is_newest_first_and_bounded
    5.times { |i| @store.push(id: i.to_s) }
    assert_equal %w[4 3 2], @store.recent.map { |r| r[:id] }
    assert_equal %w[4], @store.recent(1).map { |r| r[:id] }
    assert_equal 3, @store.size
  end

  def test_find_forgets_dropped_records
    4.times { |i| @store.push(id: i.to_s) }
    assert_nil @store.find("0")
    assert_equal "3", @store.find("3")[:id]
  end

  def test_readers_get_copies
    @store.push(id: "a", n: 1)
    @store.recent.first[:n] = 2
    assert_equal 1, @store.find("a")[:n]
  end

  def test_update_changes_a_stored_record_only
    @store.push(id: "a", after_reply_ms: nil)
    assert @store.update("a", after_reply_ms: 1.5)
    refute @store.update("zz", after_reply_ms: 1.5)
    assert_equal 1.5, @store.find("a")[:after_reply_ms]
  end

  def test_clear_and_default_capacity
    @store.push(id: "a")
    @store.clear
    assert_empty @store.recent
    assert_equal 200, Heron::Profiler::Store.new.capacity
    assert_raises(ArgumentError) { Heron::Profiler::Store.new(0) }
  end

  def test_concurrent_pushes_keep_the_bound
    threads = Array.new(4) { |t| Thread.new { 100.times { |i| @store.push(id: "#{t}-#{i}") } } }
    threads.each(&:join)
    assert_equal 3, @store.recent.size
  end
end

class StoreObjectEntryTest < Minitest::Test
  Entry = Struct.new(:id, :n) do
    def to_h = { id: id, n: n }
  end

  def test_object_entries_are_read_as_fresh_hashes
    store = Heron::Profiler::Store.new(2)
    entry = store.push(Entry.new("a", 1))
    entry.n = 2
    assert_equal({ id: "a", n: 2 }, store.find("a"))
    assert store.update("a", n: 3)
    3.times { |i| store.push(Entry.new("b#{i}", i)) }
    assert_equal %w[b2 b1], store.recent.map { |record| record[:id] }
    assert_nil store.find("a")
  end
end
