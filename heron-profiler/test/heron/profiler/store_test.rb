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

# The middleware's records: RequestProfiles, which the store copies instead of keeping.
class StoreProfileEntryTest < Minitest::Test
  def profile(path = "/a", query = "q=1")
    profile = Heron::Profiler::RequestProfile.new("GET", path, query)
    profile.app_returned(201)
    profile.finished
    profile
  end

  def test_a_profile_is_copied_not_kept
    store = Heron::Profiler::Store.new(2)
    original = profile
    store.push(original)
    entry = store.entries.first
    refute_same original, entry
    assert_instance_of Heron::Profiler::RequestProfile, entry
    assert_equal Heron::Profiler::Record.of(original).merge(started_at: nil), Heron::Profiler::Record.of(entry).merge(started_at: nil)
    assert_equal original.id, store.recent.first[:id]
    assert entry.id.frozen?
    assert_empty entry.fibers
  end

  def test_copies_keep_encodings_and_nil_and_cut_long_strings
    store = Heron::Profiler::Store.new(2)
    long = "/#{'x' * 5000}"
    store.push(Heron::Profiler::RequestProfile.new("GET".b, long, nil))
    entry = store.entries.first
    assert_equal Encoding::BINARY, entry.request_method.encoding
    assert_equal long[0, Heron::Profiler::Store::MAX_TEXT], entry.path
    assert_nil entry.query
  end

  def test_amend_copies_what_changed_later
    store = Heron::Profiler::Store.new(2)
    original = profile
    store.push(original)
    original.after_reply_ms = 2.5
    assert_nil store.find(original.id)[:after_reply_ms]
    assert store.amend(original)
    assert_equal 2.5, store.find(original.id)[:after_reply_ms]
    2.times { store.push(profile) }
    refute store.amend(original), "dropped from the ring"
  end

  def test_amend_keeps_the_queries_packed_at_push
    store = Heron::Profiler::Store.new(2)
    original = profile
    original.add_query(Heron::Profiler::Query.new("SELECT 1", 1.5, "app.rb:1", :sequel), 1.5)
    store.push(original)
    original.after_reply_ms = 1.0
    assert store.amend(original)
    assert_equal [1.0, ["SELECT 1"]], store.entries.first.then { |entry| [entry.after_reply_ms, entry.queries.map(&:sql)] }
  end

  # A record's queries, findings and extras are packed (Marshal, in C): they come back as new
  # objects; what cannot be packed is kept as it is.
  def test_queries_come_back_as_copies_and_what_cannot_be_packed_as_it_is
    store = Heron::Profiler::Store.new(2)
    packed, odd = profile, profile
    query = Heron::Profiler::Query.new("SELECT * FROM users WHERE id = 1", 1.5, "app.rb:3", :sequel)
    packed.add_query(query, 1.5)
    packed.n_plus_one = [{ call_site: "app.rb:3", normalized: "SELECT * FROM users WHERE id = ?", count: 2 }]
    unpackable = Heron::Profiler::Query.new("SELECT 1", 0.1, nil, -> {})
    odd.add_query(unpackable, 0.1)
    [packed, odd].each { |record| store.push(record) }
    copy, kept = store.entries.reverse
    assert_equal [query.to_h], copy.queries.map(&:to_h)
    refute_same query, copy.queries.first
    assert_equal packed.n_plus_one, copy.n_plus_one
    assert_same unpackable, kept.queries.first
  end

  def test_queries_stay_and_slots_are_reused
    store = Heron::Profiler::Store.new(1)
    with_query = profile
    with_query.add_query(Heron::Profiler::Query.new("SELECT 1", 1.5, nil, :sequel), 1.5)
    store.push(with_query)
    GC.start
    assert_equal ["SELECT 1"], store.entries.first.queries.map(&:sql)
    store.push(profile("/b" * 100, ""))
    store.push(profile("/c", ""))
    assert_equal ["/c", ""], store.recent.first.values_at(:path, :query)
  end

  # Packing a record's queries runs Ruby code, so another thread may push meanwhile: every
  # slot must still hold one whole record.
  def test_threads_pushing_profiles_with_queries_keep_whole_records
    store = Heron::Profiler::Store.new(8)
    threads = Array.new(4) do |t|
      Thread.new do
        50.times do |i|
          record = profile("/t#{t}/#{i}", "")
          record.add_query(Heron::Profiler::Query.new("SELECT #{t}, #{i}", 0.1, nil, :sequel), 0.1)
          store.push(record)
        end
      end
    end
    threads.each(&:join)
    entries = store.entries
    assert_equal 8, entries.size
    entries.each do |entry|
      t, i = entry.path.scan(/\d+/)
      assert_equal ["SELECT #{t}, #{i}"], entry.queries.map(&:sql)
    end
    assert_equal 8, entries.map(&:id).uniq.size
  end

  def test_a_profile_with_odd_strings_is_kept_as_it_is
    store = Heron::Profiler::Store.new(1)
    odd = Heron::Profiler::RequestProfile.new(:GET, "/", "")
    store.push(odd)
    assert_same odd, store.entries.first
    assert store.amend(odd)
  end
end
