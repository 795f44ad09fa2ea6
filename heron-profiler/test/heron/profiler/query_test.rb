# frozen_string_literal: true

require "test_helper"
require "heron/profiler"

class QueryTest < Minitest::Test
  def test_to_h_has_the_store_keys
    query = Heron::Profiler::Query.new("SELECT 1", 0.5, "app.rb:3", :sequel)
    assert_equal({ sql: "SELECT 1", normalized: "SELECT ?", duration_ms: 0.5, call_site: "app.rb:3", adapter: :sequel },
                 query.to_h)
  end

  def test_fingerprint_is_call_site_and_shape
    query = Heron::Profiler::Query.new("SELECT * FROM t WHERE id = 7", 0.1, "a.rb:1", :sequel)
    assert_equal ["a.rb:1", "SELECT * FROM t WHERE id = ?"], query.fingerprint
  end
end

class QueryCompactTest < Minitest::Test
  def test_a_long_statement_keeps_its_shape_and_a_cut_text
    sql = "SELECT * FROM users WHERE id IN (#{(1..1000).to_a.join(', ')})"
    query = Heron::Profiler::Query.new(sql, 1.0, "a.rb:1", :sequel).compact(100)
    assert_equal "SELECT * FROM users WHERE id IN (?)", query.normalized
    assert_equal "#{sql[0, 100]}… (#{sql.bytesize} bytes)", query.sql
  end

  def test_a_short_statement_is_left_alone
    query = Heron::Profiler::Query.new("SELECT 1", 1.0, nil, :sequel)
    assert_same query, query.compact
    assert_equal "SELECT 1", query.sql
  end
end
