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
