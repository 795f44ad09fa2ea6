# frozen_string_literal: true

require "test_helper"
require "heron/profiler"
require_relative "profiler/sql/database_fixtures"

class ProfilerTest < Minitest::Test
  include DatabaseFixtures

  def test_wrap_returns_the_middleware_and_hooks_async
    app = Heron::Profiler.wrap(Rack::Lint.new(->(_env) { [204, {}, []] }), Heron::Configuration.new)
    assert_instance_of Heron::Profiler::Middleware, app
    assert_includes Async::Task.ancestors, Heron::Profiler::AsyncTaskHook
    assert_same Heron::Profiler.store, Heron::Profiler.store
  end

  def test_record_id_reads_the_heron_entry_of_server_timing
    assert_equal "5k2-1x8c", Heron::Profiler.record_id('app;dur=1.00, heron;desc="5k2-1x8c"')
    assert_equal "ab-1", Heron::Profiler.record_id(["cache;desc=hit", 'app;dur=1.00, heron;desc="ab-1"'])
    assert_nil Heron::Profiler.record_id('myheron;desc="x"')
    assert_nil Heron::Profiler.record_id(nil)
  end

  def test_raising_n_plus_one_checks_the_blocks_own_queries
    db = DatabaseFixtures.database(:postgres)
    error = assert_raises(Heron::Profiler::NPlusOneError) { Heron::Profiler.raising_n_plus_one { load_posts_one_by_one(db) } }
    assert_match(/N\+1 query in block: 3x at .*database_fixtures\.rb/, error.message)
    refute Heron::Profiler.raise_on_n_plus_one?
    assert_nil Heron::Profiler.accounting.current
  end

  def test_raising_n_plus_one_passes_clean_code_and_respects_the_threshold
    db = DatabaseFixtures.database(:sqlite)
    assert_equal 3, Heron::Profiler.raising_n_plus_one { db[:users].count }
    assert_equal 6, Heron::Profiler.raising_n_plus_one(threshold: 4) { load_posts_one_by_one(db) }
  end

  def test_raising_n_plus_one_inside_a_request_leaves_it_to_the_middleware
    profile = Heron::Profiler.accounting.open(Heron::Profiler::RequestProfile.new("GET", "/", ""))
    assert Heron::Profiler.raising_n_plus_one { Heron::Profiler.raise_on_n_plus_one? }
  ensure
    Heron::Profiler.accounting.close(profile)
  end

  def test_optional_classes_are_looked_up_lazily
    [Heron::Profiler.dashboard_class, Heron::Profiler.memory_profile_class].each do |klass|
      assert(klass.nil? || klass.is_a?(Class))
    end
  end
end
