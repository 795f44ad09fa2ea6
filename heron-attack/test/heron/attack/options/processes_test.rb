# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require_relative "../support/option_groups"

class OptionsProcessesTest < Minitest::Test
  include OptionGroups
  Processes = Heron::Attack::Options::Processes

  def processes(*argv)
    parse_group(argv, Processes.new)
  end

  def test_defaults_are_one_process_and_the_cache_calibration
    processes = Processes.new
    assert_equal [1, nil, false], [processes.count, processes.auto, processes.calibrate]
    assert_equal Heron::Attack::Calibration.path, processes.calibration
    assert_equal 256, Heron::Attack::Options::MAX_PROCESSES
  end

  def test_check_bounds_the_count
    processes(*%w[--processes 256]).check!(1.0)
    error = assert_raises(Heron::Attack::UsageError) { processes(*%w[--processes 257]).check!(1.0) }
    assert_equal "--processes must be at most 256", error.message
    error = assert_raises(Heron::Attack::UsageError) { processes(*%w[--processes 0]).check!(1.0) }
    assert_equal "--processes must be a positive integer", error.message
  end

  def test_auto_divides_the_peak_rate_by_the_calibrated_one
    Dir.mktmpdir do |dir|
      path = File.join(dir, "c.json")
      Heron::Attack::Calibration.save(path, { "schema" => Heron::Attack::Calibration::SCHEMA, "rate" => 1000.0,
                                              **Heron::Attack::Calibration.machine })
      processes = processes("--processes", "auto", "--calibration", path)
      processes.check!(1500.0)
      assert_equal [[2, Heron::Attack::CpuSet.mine.size].min, path], [processes.count, processes.calibration]
      assert_equal processes.count, processes.auto.count
    end
  end
end
