# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "open3"

# The guard bin/test runs under: another gem's warnings are left out; those of Heron's gems' lib/
# directories are printed and fail the run.
class WarningGuardTest < Minitest::Test
  def test_gem_warnings_are_left_out_and_lib_warnings_fail_the_run
    Dir.mktmpdir("heron-gem") do |dir|
      File.write(File.join(dir, "noisy_gem.rb"), "def noisy\n  unused = 1\nend\nwarn 'noisy gem loaded'\n")
      script = <<~RUBY
        require "minitest/autorun"
        require #{File.join(__dir__, 'warning_guard').dump}
        require #{File.join(dir, 'noisy_gem').dump}
        Warning.warn(#{"#{WarningGuard::LIB}/heron/made_up.rb:1: warning: from lib\n".dump})
        Warning.warn(#{"#{WarningGuard::ROOT}/heron-attack/lib/heron/attack/made_up.rb:1: warning: from a gem's lib\n".dump})
      RUBY
      out, status = Open3.capture2e(RbConfig.ruby, "-W", "-e", script)
      assert_equal 1, status.exitstatus, out
      refute_match(/unused|noisy gem loaded/, out)
      assert_match(/^2 warning\(s\) from gems and Ruby's library not shown/, out)
      assert_match(%r{^2 warning\(s\) from lib/:\n.*/lib/heron/made_up.rb:1: warning: from lib\n.*/heron-attack/lib/heron/attack/made_up.rb:1: }, out)
    end
  end
end
