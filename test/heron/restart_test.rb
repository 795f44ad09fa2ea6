# frozen_string_literal: true

require "test_helper"
require "open3"

# Heron::Restart in a child process of its own (it signals and replaces the process it runs in).
# The whole path, a server re-executing itself on tmp/restart.txt, is in test/heron/railtie_test.rb.
class RestartTest < Minitest::Test
  LIB = File.expand_path("../../lib", __dir__)

  def test_a_requested_restart_stops_with_term_and_re_executes_the_recorded_command
    script = <<~RUBY
      require "heron/restart"
      Heron::Restart.prepare([#{RbConfig.ruby.inspect}, "-e", "print 're-executed ' + ARGV.join(' ')", "--", "a", "b"])
      stopped = Queue.new
      trap("TERM") { stopped << true }
      print "requested=", Heron::Restart.request("tmp/restart.txt changed"), " "
      stopped.pop
      print "stopped "
      $stdout.flush
      Heron::Restart.exec_if_requested
      print "not reached"
    RUBY
    out, err, status = Open3.capture3(RbConfig.ruby, "-I", LIB, "-e", script)
    assert status.success?, err
    assert_equal "requested=true stopped re-executed a b", out
    assert_equal "heron: tmp/restart.txt changed: restarting\n", err
  end

  def test_without_a_known_command_it_says_to_restart_by_hand_and_keeps_running
    script = <<~RUBY
      require "heron/restart"
      trap("TERM") { print "TERM"; exit 1 }
      print Heron::Restart.request("tmp/restart.txt changed"), " ", Heron::Restart.requested?
      Heron::Restart.exec_if_requested
    RUBY
    out, err, status = Open3.capture3(RbConfig.ruby, "-I", LIB, "-e", script)
    assert status.success?, err
    assert_equal "false false", out
    assert_match(/restart it by hand/, err)
  end

  def test_nothing_happens_when_no_restart_was_requested
    script = %(require "heron/restart"; Heron::Restart.prepare(["false"]); Heron::Restart.exec_if_requested; print "ran on")
    out, _err, status = Open3.capture3(RbConfig.ruby, "-I", LIB, "-e", script)
    assert_equal ["ran on", true], [out, status.success?]
  end
end
