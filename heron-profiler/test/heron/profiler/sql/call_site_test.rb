# frozen_string_literal: true

require "test_helper"
require "heron/profiler"

class CallSiteTest < Minitest::Test
  def test_finds_the_first_application_frame
    site = Heron::Profiler::Sql::CallSite.new
    assert_equal "heron-profiler/test/heron/profiler/sql/call_site_test.rb:#{__LINE__}", [1].map { site.find(0) }.first
  end

  def test_library_frames_are_skipped
    site = Heron::Profiler::Sql::CallSite.new
    refute site.app?(File.join(RbConfig::CONFIG["rubylibdir"], "set.rb"))
    refute site.app?(File.expand_path("../../../../lib/heron/profiler/store.rb", __dir__))
    refute site.app?("<internal:kernel>")
    assert site.app?(File.join(Dir.pwd, "app/users.rb"))
  end

  def test_paths_outside_the_root_stay_absolute_and_none_found_is_nil
    site = Heron::Profiler::Sql::CallSite.new([], "/nonexistent")
    assert_equal "#{File.expand_path(__FILE__)}:#{__LINE__}", site.find(0)
    everything = Heron::Profiler::Sql::CallSite.new(["/", "<"])
    assert_nil everything.find
  end

  def test_the_library_or_app_decision_is_remembered_per_path_and_bounded
    site = Heron::Profiler::Sql::CallSite.new(["/lib/"], "/app")
    assert site.app?("/app/a.rb")
    refute site.app?("/lib/b.rb")
    assert site.app?("/app/a.rb")
    assert_equal 2, site.cached_paths
    limit = Heron::Profiler::Sql::CallSite::CACHE_LIMIT
    (limit - 2).times { |i| site.app?("/app/#{i}.rb") }
    assert_equal limit, site.cached_paths
    refute site.app?("/lib/c.rb")
    assert_equal 1, site.cached_paths
  end

  def test_a_remembered_path_is_still_shown_relative_with_its_own_line
    site = Heron::Profiler::Sql::CallSite.new
    lines = 2.times.map { site.find(0) }
    assert_equal ["heron-profiler/test/heron/profiler/sql/call_site_test.rb:#{__LINE__ - 1}"] * 2, lines
  end
end
