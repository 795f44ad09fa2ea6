# frozen_string_literal: true

require "test_helper"
require "open3"

# Heron::Testing works from RSpec: runs a real spec file with the rspec command.
class RSpecTest < Minitest::Test
  ROOT = File.expand_path("../../..", __dir__)

  def test_spec_file_passes_under_rspec
    rspec = "/usr/bin/rspec"
    flunk("rspec is not installed (bin/setup installs ruby-rspec)") unless File.executable?(rspec)
    out, status = Bundler.with_unbundled_env do
      Open3.capture2e(rspec, "-I", File.join(ROOT, "lib"), File.join(ROOT, "test/fixtures/rspec/testing_spec.rb"))
    end
    assert status.success?, out
    assert_match(/2 examples, 0 failures/, out)
  end
end
