# frozen_string_literal: true

require "test_helper"
require "heron/profiler"
require "json"
require "sequel"
require "tmpdir"
require_relative "../profiled_server"

# Every Sequel association kind behind the real profiler on the real server: read lazily per
# record, advised with the `eager` that cures it; with that `eager` (or `eager_graph`), nothing;
# eager-loaded and never read, unused eager loading. (Sequel has no polymorphic association in its core and no
# counter cache, so neither is here.)
class SequelNPlusOneTest < Minitest::Test
  include ProfiledServer

  DB = Sequel.sqlite(File.join(Dir.mktmpdir("heron-sequel-n1"), "test.db"))
  DB.create_table!(:writers) { primary_key :id; String :name }
  DB.create_table!(:profiles) { primary_key :id; Integer :writer_id; String :bio }
  DB.create_table!(:novels) { primary_key :id; Integer :writer_id; String :title }
  DB.create_table!(:genres) { primary_key :id; String :name }
  DB.create_table!(:genres_novels) { Integer :novel_id; Integer :genre_id }
  4.times do |i|
    writer = DB[:writers].insert(name: "writer #{i}")
    DB[:profiles].insert(writer_id: writer, bio: "bio #{i}")
    novel = DB[:novels].insert(writer_id: writer, title: "novel #{i}")
    DB[:genres_novels].insert(novel_id: novel, genre_id: DB[:genres].insert(name: "genre #{i}"))
  end

  # A writer: one profile, many novels, and the genres of those novels.
  class Writer < Sequel::Model(DB[:writers])
    plugin :many_through_many
    one_to_one :profile, class: "SequelNPlusOneTest::Profile"
    one_to_many :novels, class: "SequelNPlusOneTest::Novel"
    many_through_many :genres, [%i[novels writer_id id], %i[genres_novels novel_id genre_id]], class: "SequelNPlusOneTest::Genre"
  end

  # A writer's profile.
  class Profile < Sequel::Model(DB[:profiles])
  end

  # A novel: by a writer, in genres (the first of which is its main one).
  class Novel < Sequel::Model(DB[:novels])
    many_to_one :writer, class: "SequelNPlusOneTest::Writer"
    many_to_many :genres, class: "SequelNPlusOneTest::Genre"
    one_through_one :main_genre, class: "SequelNPlusOneTest::Genre", join_table: :genres_novels, right_key: :genre_id
  end

  # A genre.
  class Genre < Sequel::Model(DB[:genres])
  end

  # `/MODEL/ASSOCIATION`: each record's association read lazily; `?eager=1` eager-loaded first
  # (`?eager=graph`: with eager_graph, in one JOIN); `&read=0` eager-loaded and never read.
  APP = lambda do |env|
    _, model, name = env["PATH_INFO"].split("/")
    model = SequelNPlusOneTest.const_get(model)
    dataset = model.order(Sequel.qualify(model.table_name, :id))
    dataset = dataset.eager(name.to_sym) if env["QUERY_STRING"].include?("eager=1")
    dataset = dataset.eager_graph(name.to_sym) if env["QUERY_STRING"].include?("eager=graph")
    records = dataset.all # the eager loads' call site
    values = env["QUERY_STRING"].include?("read=0") ? records.map(&:id) : records.map { |record| Array(record.send(name)).size } # the lazy reads' call site
    [200, { "content-type" => "text/plain" }, [values.join(",")]]
  end

  SOURCE = File.readlines(__FILE__)

  def test_many_to_one_is_advised_with_eager
    assert_advised "Novel", "writer"
  end

  def test_one_to_one_is_advised_with_eager
    assert_advised "Writer", "profile"
  end

  def test_one_to_many_is_advised_with_eager
    assert_advised "Writer", "novels"
  end

  def test_many_to_many_is_advised_with_eager
    assert_advised "Novel", "genres"
  end

  def test_one_through_one_is_advised_with_eager
    assert_advised "Novel", "main_genre"
  end

  def test_many_through_many_is_advised_with_eager
    assert_advised "Writer", "genres"
  end

  # Raise mode (a test's `raising_n_plus_one`) raises for an eager load never read too.
  def test_raise_mode_raises_for_unused_eager_loading
    error = assert_raises(Heron::Profiler::NPlusOneError) do
      Heron::Profiler.raising_n_plus_one { Writer.order(:id).eager(:novels).all.map(&:name) }
    end
    assert_equal [[:unused_eager_loading, 4, "SequelNPlusOneTest::Writer => [:novels]: remove .eager(:novels)"]],
                 error.findings.map { |finding| finding.values_at(:kind, :count, :advice) }
    assert_match(/unused eager loading in block: at \S+sequel_n_plus_one_test\.rb:\d+ \[SequelNPlusOneTest::Writer/, error.message)
    Heron::Profiler.raising_n_plus_one { Writer.order(:id).eager(:novels).all.map { |writer| writer.novels.size } }
  end

  # The log line: text by default, a JSON object with its own event in JSON logs.
  def test_unused_eager_loading_is_logged_with_its_own_event
    advice = "SequelNPlusOneTest::Writer => [:novels]: remove .eager(:novels)"
    text = StringIO.new
    with_profiled_server(APP, error_io: text) { |port| n_plus_one(port, "/Writer/novels?eager=1&read=0") }
    assert_includes text.string, "unused eager loading in GET /Writer/novels: at #{site('the eager loads')} [#{advice}]"
    json = StringIO.new
    with_profiled_server(APP, error_io: json, log_format: :json) { |port| n_plus_one(port, "/Writer/novels?eager=1&read=0") }
    entry = JSON.parse(json.string.lines.find { |line| line.include?("unused_eager_loading") })
    assert_equal ["warn", "unused_eager_loading", "GET /Writer/novels", 4, site("the eager loads"), advice],
                 entry.values_at("level", "event", "request", "count", "call_site", "advice")
  end

  private

  def assert_advised(model, name)
    advice = "SequelNPlusOneTest::#{model} => [:#{name}]: add .eager(:#{name})"
    with_profiled_server(APP) do |port|
      assert_match(/\A1 query x4 at #{Regexp.escape(site('the lazy reads'))} \[#{Regexp.escape(advice)}\] \(SELECT /, n_plus_one(port, "/#{model}/#{name}"))
      { "1" => "eager", "graph" => "eager_graph" }.each do |eager, loader|
        assert_nil n_plus_one(port, "/#{model}/#{name}?eager=#{eager}"), "#{loader} leaves nothing to advise"
        assert_equal "unused eager loading at #{site('the eager loads')} [#{advice.sub(': add .eager', ": remove .#{loader}")}]",
                     n_plus_one(port, "/#{model}/#{name}?eager=#{eager}&read=0")
      end
    end
  end

  def n_plus_one(port, path)
    status, headers, body = http_get(port, path)
    assert_equal 200, status, body
    headers["x-heron-n-plus-one"]
  end

  # "heron-profiler/test/…/sequel_n_plus_one_test.rb:LINE" of the line whose comment says `text`.
  def site(text)
    "heron-profiler/test/heron/profiler/sql/sequel_n_plus_one_test.rb:#{SOURCE.index { |line| line.include?("# #{text}") } + 1}"
  end
end
