# frozen_string_literal: true

require "test_helper"
require "stringio"
require "tmpdir"
require "heron/attack"
require_relative "support/test_server"

# `--calibrate URL` against a real server, and `--processes auto` choosing from a calibration.
class CalibrationTest < Minitest::Test
  def cli(*argv)
    @stdout = StringIO.new
    @stderr = StringIO.new
    Heron::Attack::CLI.new(argv, stdout: @stdout, stderr: @stderr).run
  end

  def calibrate(file, *argv, **server)
    TestServer.fork_server(**server) { |base| cli("--calibrate", "#{base}/", "--calibration", file, *argv) }
  end

  # The search climbs from 100/s (its start, 250/s, capped by --rate) to the cap, and what it
  # saves is the highest step that held, with that step's lateness under 10 ms. A run on a
  # machine so busy that even the lowest step was late is tried again.
  def test_calibrate_finds_and_saves_the_highest_sustained_step
    Dir.mktmpdir do |dir|
      file = File.join(dir, "calibration.json")
      saved = nil
      3.times do
        status = calibrate(file, "--rate", "100", "--duration", "0.5s")
        saved = JSON.parse(File.read(file))
        break if status.zero?
      end
      assert_operator saved["rate"], :>, 0, @stdout.string
      sustained = saved["steps"].select { |s| s["sustained"] }
      assert_equal sustained.map { |s| s["rate"] }.max, saved["rate"]
      assert_operator saved["rate"], :<=, 100
      assert_operator saved["lateness_p99_ms"], :<, 10
      assert_equal [Socket.gethostname, Heron::Attack::CpuSet.mine.to_s], saved.values_at("host", "cpus")
      assert_match(%r{^Calibration: one process sustains #{saved['rate'].round}/s on this machine \(lateness p99 [\d.]+ ms < 10 ms\); saved to #{file}$},
                   @stdout.string)
      assert_match(%r{^ +100/s +achieved +\d+\.\d\d% +lateness p99 +[\d.]+ ms +errors 0 +(not )?sustained$}, @stdout.string)
    end
  end

  # Two connections to a server that holds each request 50 ms carry at most 40/s: a search
  # that judged anything but lateness and the achieved rate would claim more.
  def test_a_generator_held_back_calibrates_below_what_it_can_carry
    Dir.mktmpdir do |dir|
      file = File.join(dir, "calibration.json")
      calibrate(file, "--rate", "200", "--duration", "0.5s", "-c", "2", delay: 0.05)
      saved = JSON.parse(File.read(file))
      assert_operator saved["rate"], :<, 40, @stdout.string
      refute saved["steps"].first["sustained"], "200/s cannot go through two 50 ms connections"
      assert_operator saved["steps"].size, :>=, 3, "the search halves the gap below the failed step"
    end
  end

  def write_calibration(dir, rate, **machine)
    File.join(dir, "calibration.json").tap do |file|
      File.write(file, JSON.generate({ "schema" => "heron-attack-calibration/1", "rate" => rate }.merge(Heron::Attack::Calibration.machine,
                                                                                                          machine.transform_keys(&:to_s))))
    end
  end

  def test_processes_auto_divides_the_peak_rate_by_the_calibrated_rate
    skip "needs two CPUs" if Heron::Attack::CpuSet.mine.size < 2
    Dir.mktmpdir do |dir|
      file = write_calibration(dir, 100.0)
      json = File.join(dir, "run.json")
      TestServer.fork_server do |base|
        assert_equal 0, cli("#{base}/", "--stages", "0.2s:20,0.2s:150", "--processes", "auto", "--calibration", file, "--json", json)
        report = Heron::Attack::JsonReport.load(json)
        assert_equal 2, report["plan"]["processes"], "150/s at 100/s per process"
        assert_equal "auto: 2 for 150/s at 100/s per process (calibrated)", report["plan"]["processes_auto"]
        assert_match(%r{\(2 processes \(auto: 2 for 150/s at 100/s per process \(calibrated\)\), no connection cap\)}, @stdout.string)
        assert_equal 0, cli("#{base}/", "-r", "60", "-n", "6", "--processes", "auto", "--calibration", file, "--json", json)
        assert_equal 1, Heron::Attack::JsonReport.load(json)["plan"]["processes"]
      end
    end
  end

  def test_processes_auto_stops_at_the_cpus_and_says_so
    cpus = Heron::Attack::CpuSet.mine.size
    Dir.mktmpdir do |dir|
      file = write_calibration(dir, 1.0)
      json = File.join(dir, "run.json")
      TestServer.fork_server do |base|
        assert_equal 0, cli("#{base}/", "-r", "300", "-n", "10", "--processes", "auto", "--calibration", file, "--json", json)
      end
      report = Heron::Attack::JsonReport.load(json)
      assert_equal [cpus, Heron::Attack::Options::MAX_PROCESSES].min, report["plan"]["processes"]
      assert_includes report["warnings"], "--processes auto: 300/s needs 300 processes at the calibrated 1/s each, but the generator " \
                                          "may use only #{cpus} CPU#{'s' if cpus > 1}: expect lateness"
    end
  end

  def test_processes_auto_without_a_calibration_of_this_machine_is_a_usage_error
    Dir.mktmpdir do |dir|
      missing = File.join(dir, "none.json")
      assert_equal 2, cli("http://127.0.0.1:1/", "-r", "10", "-n", "1", "--processes", "auto", "--calibration", missing)
      assert_equal "heron attack: no calibration at #{missing}: run heron attack --calibrate URL first (see heron attack --help)\n", @stderr.string
      other = write_calibration(dir, 100.0, host: "elsewhere")
      assert_equal 2, cli("http://127.0.0.1:1/", "-r", "10", "-n", "1", "--processes", "auto", "--calibration", other)
      assert_match(/was measured on elsewhere with CPUs .*: run heron attack --calibrate URL again/, @stderr.string)
      assert_equal 2, cli("http://127.0.0.1:1/", "-r", "10", "-n", "1", "--processes", "some")
      assert_match(/--processes takes a number or auto, not "some"/, @stderr.string)
    end
  end

  def test_default_calibration_file_is_in_the_cache_directory
    assert_equal "/c/heron-attack/calibration.json", Heron::Attack::Calibration.path("XDG_CACHE_HOME" => "/c")
    assert_equal File.join(Dir.home, ".cache/heron-attack/calibration.json"), Heron::Attack::Calibration.path({})
  end
end
