# frozen_string_literal: true

require "test_helper"
require_relative "../support/option_groups"

class OptionsLoadTest < Minitest::Test
  include OptionGroups
  Load = Heron::Attack::Options::Load

  def load(*argv)
    parse_group(argv, Load.new)
  end

  def assert_usage(message, &block)
    assert_match message, assert_raises(Heron::Attack::UsageError, &block).message
  end

  def test_defaults_give_nothing_but_the_calibration_ceiling_and_step
    load = Load.new
    assert_equal [nil, nil, nil, nil], [load.rate, load.duration, load.requests, load.connections]
    assert_equal [100_000.0, 2.0], [load.calibrate_max_rate, load.calibrate_step]
  end

  def test_check_builds_the_schedule_and_refuses_a_zero_duration
    load = load("-r", "10", "-d", "2s", "-c", "3")
    load.check!
    assert_equal [10.0, 2.0, 20, 3], [load.rate, load.duration, load.total_requests, load.connections]
    assert load.steady?
    assert_usage(/--duration must be positive/) { load("-r", "10", "-d", "0").check! }
    assert_usage(/--duration must be positive/) { load("-d", "0ms").calibrate_plan! }
  end

  def test_connections_default_to_one_and_must_cover_the_processes
    load = load("-r", "10", "-n", "5")
    load.one_connection_per_process!(1, "--http2")
    assert_equal 1, load.connections
    assert_usage(/\A--http2 needs at least one connection per process/) { load.one_connection_per_process!(2, "--http2") }
  end

  def test_spread_replaces_the_plan_by_an_even_rate
    load = load("-r", "10", "-n", "5")
    load.check!
    load.spread!(20, 4.0)
    assert_equal [20, 5.0, 20], [load.requests, load.rate, load.total_requests]
    assert_equal [[4.0, 5.0, 5.0]], load.schedule.to_a.map { |stage| stage.values_at("duration_s", "from", "to") }
  end
end
