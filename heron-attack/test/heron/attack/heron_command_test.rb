# frozen_string_literal: true

require "test_helper"
require "stringio"
require "heron/config/cli"

# With heron-attack installed, the server's `heron attack ...` is this gem's command (moved from
# the core's tests, which run without this gem; test/heron/core_alone_test.rb covers its absence).
class HeronCommandTest < Minitest::Test
  def test_heron_attack_runs_the_load_generators_cli
    stdout = StringIO.new
    assert_equal 0, Heron::Config::CLI.new(%w[attack --help], stdout: stdout, stderr: StringIO.new).run
    assert_includes stdout.string, "Usage: heron attack URL"
  end
end
