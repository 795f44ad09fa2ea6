# frozen_string_literal: true

require "test_helper"
require "heron/profiler"
require_relative "database_fixtures"

class SequelHookTest < Minitest::Test
  include DatabaseFixtures

  def setup
    Heron::Profiler.instrumentation.install
    @accounting = Heron::Profiler.accounting
  end

  def profiled
    profile = @accounting.open(Heron::Profiler::RequestProfile.new("GET", "/", ""))
    yield
    profile
  ensure
    @accounting.close(profile)
  end

  def test_records_sql_duration_call_site_and_adapter
    each_database do |db, name|
      profile = profiled { db[:users].where(id: 1).first }
      query = profile.queries.last
      assert_match(/SELECT \* FROM .users. WHERE \(.id. = 1\)/, query.sql, name)
      assert_match(/WHERE \(.id. = \?\)/, query.normalized)
      assert_operator query.duration_ms, :>, 0.0
      assert_equal "heron-profiler/test/heron/profiler/sql/sequel_hook_test.rb:#{__LINE__ - 5}", query.call_site
      assert_equal :sequel, query.adapter
    end
  end

  def test_n_plus_one_is_found_on_both_databases
    each_database do |db, name|
      profile = profiled { assert_equal 6, load_posts_one_by_one(db) }
      findings = Heron::Profiler::NPlusOneDetector.new(2).detect(profile.queries)
      assert_equal 1, findings.size, name
      assert_equal 3, findings.first[:count]
      assert_match(/FROM .posts. WHERE \(.user_id. = \?\)/, findings.first[:normalized])
      assert_match(/database_fixtures\.rb:\d+\z/, findings.first[:call_site])
    end
  end

  def test_queries_outside_a_request_are_not_recorded
    each_database do |db, _name|
      profile = profiled { nil }
      db[:users].count
      assert_empty profile.queries
    end
  end

  def test_a_failing_statement_is_still_recorded
    each_database do |db, _name|
      profile = profiled { assert_raises(Sequel::DatabaseError) { db.run("SELECT * FROM missing_table") } }
      assert_equal "SELECT * FROM missing_table", profile.queries.last.sql
    end
  end

  def test_install_is_idempotent
    assert Heron::Profiler::Sql::SequelHook.install
    assert_equal 1, Sequel::Database.ancestors.count(Heron::Profiler::Sql::SequelHook)
  end
end
