# frozen_string_literal: true

require "test_helper"
require "stringio"
require "tmpdir"
require "heron/attack"
require_relative "support/test_server"

# Rates judged stage by stage, over real sockets against a real server (TestServer in a child
# process): a pause at the start, in the middle or at the end is judged neither way, and a
# generator held back (one connection to a server that takes 20 ms a request: at most 50/s
# against a plan of 100/s) fails `rate<99%` even when a pause after it would have hidden it in
# a rate averaged over the whole plan.
class StageRatesCLITest < Minitest::Test
  def attack(*argv, **server)
    Dir.mktmpdir do |dir|
      json = File.join(dir, "run.json")
      @stdout = StringIO.new
      @stderr = StringIO.new
      status = TestServer.fork_server(**server) do |base|
        Heron::Attack::CLI.new(["#{base}/", *argv, "--json", json], stdout: @stdout, stderr: @stderr).run
      end
      [status, Heron::Attack::JsonReport.load(json)]
    end
  end

  RATE = 10 # the last request of a stage is due 1/RATE (100 ms) before its end: that much slack
  TRIES = 5 # runs tried for one the generator was on time in (a suite beside this one starves it)

  # Whether the generator was held up by other programs for longer than a stage's slack (so a
  # stage's last request may have gone out after the stage's end): such a run says nothing about
  # the rates, and is tried again.
  def starved?(report) = report.dig("lateness_ms", "max") >= 1000.0 / RATE

  def steady(*argv)
    TRIES.times do
      status, report = attack(*argv)
      return [status, report] unless starved?(report)
    end
    flunk "the generator was held up for #{1000 / RATE} ms or more in #{TRIES} runs: the machine is too busy"
  end

  def assert_judged(report, stages)
    rows = report["rate"]["stages"]
    assert_equal(stages.map(&:first), rows.map { |r| r["stage"] })
    stages.each_with_index do |(_, target), i|
      assert_in_delta target, rows[i]["target"], 1e-9
      assert_in_delta target, rows[i]["achieved"], target * 0.01
    end
  end

  def test_a_pause_at_the_start_is_judged_neither_way
    status, report = steady("--stages", "1s:0,1s:#{RATE}", "--fail-if", "rate<99%")
    assert_equal 0, status, @stderr.string
    assert_judged(report, [[1, RATE]])
    assert_in_delta RATE, report["rate"]["target"], 1e-9
    assert_match(%r{^  stage 1 +0\.0ms-1\.000s +pause \(or nothing sent\): not judged$}, @stdout.string)
    assert_match(%r{^  stage 2 +1\.000s-2\.000s +target #{RATE}\.00/s +achieved #{RATE}\.\d\d/s +100\.0%$}, @stdout.string)
  end

  def test_a_pause_in_the_middle_is_judged_neither_way
    status, report = steady("--stages", "1s:#{RATE},1s:0,1s:#{RATE}", "--fail-if", "rate<99%")
    assert_equal 0, status, @stderr.string
    assert_in_delta RATE, report["rate"]["target"], 1e-9
    assert_in_delta RATE, report["rate"]["achieved"], RATE * 0.01
    assert_judged(report, [[0, RATE], [2, RATE]])
  end

  def test_a_pause_at_the_end_is_judged_neither_way
    status, report = steady("--stages", "1s:#{RATE},1s:0", "--fail-if", "rate<99%")
    assert_equal 0, status, @stderr.string
    check = report["thresholds"].first
    assert_operator check["actual"], :<=, 101, "achieved cannot be twice the target"
    assert_judged(report, [[0, RATE]])
  end

  # One connection (-c 1) to a server that holds each request 20 ms: at most 50 requests a
  # second go out against a stage that asks for 100/s, however fast the machine. Averaged over
  # the whole plan with its 2 s pause (33.3/s), those 50/s looked like 150% and passed.
  def test_a_generator_held_back_fails_rate_even_with_a_pause_after_it
    status, report = attack("--stages", "1s:100,2s:0", "-c", "1", "--fail-if", "rate<99%", delay: 0.02)
    assert_equal 3, status, @stdout.string
    row = report["rate"]["stages"].first
    assert_in_delta 100.0, row["target"], 1e-9
    assert_equal 100, row["sent"]
    assert_operator row["achieved"], :<, 55
    assert_operator row["window_s"], :>, 1.8
    assert_match(/^heron attack: threshold broken: rate<99% \(actual \d+\.\d+\)$/, @stderr.string)
    assert(report["warnings"].any? { |w| w.start_with?("achieved rate") && w.include?("target 100.00/s") }, report["warnings"].inspect)
  end

  # The stage that is held back is the one named, while the one before it keeps up (20/s on one
  # connection that can carry 50/s).
  def test_any_sending_stage_that_falls_short_breaks_rate
    status, report = attack("--stages", "1s:20,1s:200", "-c", "1", "--fail-if", "rate<99%", delay: 0.02)
    assert_equal 3, status, @stdout.string
    short = report["rate"]["stages"].last
    assert_equal [1, 200], short.values_at("stage", "planned")
    assert_operator short["percent"], :<, 50
    assert_in_delta short["percent"], report["thresholds"].first["actual"], 1e-6
    assert(report["warnings"].any? { |w| w.start_with?("stage 2: achieved rate") }, report["warnings"].inspect)
  end
end
