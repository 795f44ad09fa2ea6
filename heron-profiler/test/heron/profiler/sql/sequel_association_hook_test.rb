# frozen_string_literal: true

require "test_helper"
require "heron/profiler"
require "sequel"
require "tmpdir"
require_relative "../profiled_server"

# Sequel models read lazily behind the real profiler on the real server: the N+1 is advised
# with its model and association, the same finding everywhere it is shown.
class SequelAssociationHookTest < Minitest::Test
  include ProfiledServer

  DB = Sequel.sqlite(File.join(Dir.mktmpdir("heron-sequel-assoc"), "test.db"))
  DB.create_table!(:authors) { primary_key :id; String :name }
  DB.create_table!(:books) { primary_key :id; Integer :author_id; String :title }
  4.times { |i| DB[:books].insert(author_id: DB[:authors].insert(name: "author #{i}"), title: "book #{i}") }

  # An author with many books.
  class Author < Sequel::Model(DB[:authors])
    one_to_many :books, class: "SequelAssociationHookTest::Book"
  end

  # A book by an author.
  class Book < Sequel::Model(DB[:books])
  end

  APP = lambda do |env|
    authors = Author.order(:id)
    authors = authors.eager(:books) if env["QUERY_STRING"] == "eager=1"
    titles = authors.all.flat_map { |author| author.books.map(&:title) } # line 31: the call site
    [200, { "content-type" => "text/plain" }, [titles.join(",")]]
  end

  # Eager-loads, then reads each author's books `reads` times (`?reads=N`) from Sequel's cache.
  REREAD_APP = lambda do |env|
    reads = env["QUERY_STRING"][/reads=(\d+)/, 1].to_i
    Author.order(:id).eager(:books).all.each { |author| reads.times { author.books } }
    [200, { "content-type" => "text/plain" }, ["ok"]]
  end

  ADVICE = "SequelAssociationHookTest::Author => [:books]: add .eager(:books)"
  SITE = "heron-profiler/test/heron/profiler/sql/sequel_association_hook_test.rb:31"

  def test_a_lazy_association_n_plus_one_is_advised_in_the_header_the_log_and_the_record_until_eager
    log = StringIO.new
    with_profiled_server(APP, error_io: log) do |port|
      status, headers, = http_get(port, "/authors")
      assert_equal 200, status
      assert_includes headers["x-heron-n-plus-one"], "x4 at #{SITE} [#{ADVICE}]"
      finding = profile_record(headers)[:n_plus_one].first
      assert_equal [4, ADVICE], finding.values_at(:count, :advice)
      assert_includes log.string, "N+1 query in GET /authors: 4x at #{SITE} [#{ADVICE}]: SELECT"
      _, eager, body = http_get(port, "/authors?eager=1")
      assert_equal ["book 0,book 1,book 2,book 3", nil], [body, eager["x-heron-n-plus-one"]], "eager leaves nothing to advise"
    end
  end

  def test_queries_outside_an_association_load_carry_no_advice
    with_profiled_server(APP) do |port|
      _, headers, = http_get(port, "/authors")
      queries = profile_record(headers)[:queries]
      assert_nil queries.first[:advice], "the authors query itself"
      assert_equal [ADVICE], queries.drop(1).map { |query| query[:advice] }.uniq
    end
  end

  # A read of an association already loaded runs no query: the hook lets it through without
  # marking an association load (it allocated one per read, thousands a request after eager).
  def test_reading_an_eager_loaded_association_allocates_nothing_for_the_hook
    with_profiled_server(REREAD_APP) do |port|
      allocations = [0, 500].map do |reads|
        http_get(port, "/authors?reads=#{reads}") # warm
        _, headers, = http_get(port, "/authors?reads=#{reads}")
        headers["server-timing"][/alloc;desc="(\d+) objects"/, 1].to_i
      end
      added = allocations[1] - allocations[0]
      assert_operator added, :<, 500, "4 authors x 500 cached reads allocated #{added} objects (before: 2 a read)"
    end
  end
end
