# frozen_string_literal: true

require "test_helper"
require "heron/profiler"

class NPlusOneDetectorTest < Minitest::Test
  def query(sql, site = "app/users.rb:14")
    Heron::Profiler::Query.new(sql, 0.1, site, :sequel)
  end

  def queries
    [query("SELECT * FROM users")] + (1..12).map { |i| query("SELECT * FROM posts WHERE user_id = #{i}") } +
      (1..3).map { |i| query("SELECT * FROM tags WHERE id = #{i}", "app/tags.rb:2") }
  end

  def test_groups_by_call_site_and_shape_most_repeated_first
    findings = Heron::Profiler::NPlusOneDetector.new(2).detect(queries)
    assert_equal [12, 3], findings.map { |f| f[:count] }
    assert_equal({ call_site: "app/users.rb:14", normalized: "SELECT * FROM posts WHERE user_id = ?", count: 12 },
                 findings.first)
  end

  def test_threshold_and_distinct_call_sites
    assert_equal 1, Heron::Profiler::NPlusOneDetector.new(4).detect(queries).size
    spread = [query("SELECT 1", "a.rb:1"), query("SELECT 2", "b.rb:1")]
    assert_empty Heron::Profiler::NPlusOneDetector.new(2).detect(spread)
    assert_equal 2, Heron::Profiler::NPlusOneDetector.new(0).threshold
  end

  def test_header_is_bounded_ascii_on_one_line
    detector = Heron::Profiler::NPlusOneDetector.new
    header = detector.header(detector.detect(queries))
    assert_match(/\A2 queries x12 at app\/users\.rb:14 \(SELECT \* FROM posts WHERE user_id = \?\); x3 at /, header)
    long = detector.header([{ call_site: "é.rb:1", normalized: "SELECT\n#{'x' * 600}", count: 2 }], 100)
    assert_equal 100, long.bytesize
    assert long.ascii_only?
    assert_match(/\A1 query x2 at \?\.rb:1 \(SELECT x+\.\.\.\z/, long)
  end

  def test_message_names_request_call_site_query_and_count
    detector = Heron::Profiler::NPlusOneDetector.new
    message = detector.message([{ call_site: nil, normalized: "SELECT ?", count: 3 }], "GET /users")
    assert_equal "heron: N+1 query in GET /users: 3x at (unknown): SELECT ?\n", message
  end

  def test_safelist_by_table_file_or_line
    counts = lambda do |safelist|
      Heron::Profiler::NPlusOneDetector.new(2, safelist).detect(queries).map { |f| f[:count] }
    end
    assert_equal [3], counts.call(["posts"])
    assert_equal [3], counts.call(["POSTS"])
    assert_equal [12], counts.call(["app/tags.rb"])
    assert_equal [12], counts.call(["app/tags.rb:2"])
    assert_equal [12, 3], counts.call(["app/tags.rb:3", "app/tags", "users", "app/users.r"])
    assert_empty counts.call(["posts", "tags"])
    quoted = [query('SELECT * FROM "main"."posts" WHERE id = 1'), query('SELECT * FROM "main"."posts" WHERE id = 2')]
    assert_empty Heron::Profiler::NPlusOneDetector.new(2, ["posts"]).detect(quoted)
  end

  UNUSED = { kind: :unused_eager_loading, call_site: "app/posts.rb:3", count: 5, advice: "Post => [:tags]: remove .includes(:tags)" }.freeze

  def eager_loads(*names)
    loads = Heron::Profiler::Sql::EagerLoads.new
    names.each { |name| loads.add(Object, name, 5, :includes) { "app/posts.rb:3" } }
    loads
  end

  # An eager load never read is a finding of its own, after the N+1s, even with too few
  # queries for an N+1; the safelist leaves it out by call site.
  def test_unused_eager_loads_are_findings_worded_apart_from_n_plus_ones
    detector = Heron::Profiler::NPlusOneDetector.new
    loads = eager_loads(:tags, :roles).tap { |l| l.read(Object, :roles) }
    unused = UNUSED.merge(advice: "Object => [:tags]: remove .includes(:tags)")
    assert_equal [unused], detector.detect([query("SELECT 1")], loads)
    assert_equal [12, 3, 5], detector.detect(queries, loads).map { |finding| finding[:count] }
    assert_empty Heron::Profiler::NPlusOneDetector.new(2, ["app/posts.rb"]).detect([], loads)
    header = detector.header(detector.detect(queries, loads))
    assert_match(/\A2 queries x12 at .*; x3 at .*; unused eager loading at app\/posts\.rb:3 \[Object => \[:tags\]: remove \.includes\(:tags\)\]\z/, header)
    assert_equal "unused eager loading at app/posts.rb:3 [Post => [:tags]: remove .includes(:tags)]", detector.header([UNUSED])
    assert_equal "heron: unused eager loading in GET /posts: at app/posts.rb:3 [Post => [:tags]: remove .includes(:tags)]\n",
                 detector.message([UNUSED], "GET /posts")
  end

  def test_eager_loads_add_up_owners_and_stop_at_their_limit
    loads = eager_loads(:tags, :tags)
    assert_equal [10], loads.unused.map { |finding| finding[:count] }
    limit = Heron::Profiler::Sql::EagerLoads::LIMIT
    assert_equal limit, eager_loads(*(0..limit).map { |i| :"a#{i}" }).unused.size
  end
end
