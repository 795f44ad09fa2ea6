# frozen_string_literal: true

require "test_helper"
require "heron/profiler"

class CallSiteTest < Minitest::Test
  def test_finds_the_first_application_frame
    site = Heron::Profiler::Sql::CallSite.new
    assert_equal "test/heron/profiler/sql/call_site_test.rb:#{__LINE__}", [1].map { site.find(0) }.first
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
end
