# frozen_string_literal: true

require "test_helper"
require "json"
require "tmpdir"
require "heron/control"
require "heron/control/cli"

# `heron ctl` against a real control listener in this process (unix socket), finding it through
# flags, the config file and HERON_CONTROL_TOKEN.
class ControlCLITest < Minitest::Test
  def setup
    @dir = Dir.mktmpdir("heron-ctl")
    @socket = File.join(@dir, "control.sock")
    state = Heron::Control::State.new(mode: "single", draining: -> { false }, counters: -> { { workers: 0 } },
                                      tag: "clitest")
    log = StringIO.new
    logger = Heron::Log::Logger.new(Heron::Configuration.new(log_io: log, error_io: log))
    @listener = Heron::Control::Server.new("unix://#{@socket}", Heron::Control::Endpoints.new(state, token: "t0k"),
                                           logger).start
  end

  def teardown
    @listener.close
    ENV.delete("HERON_CONTROL_TOKEN")
  end

  def test_stats_through_the_flags
    status, out, err = ctl("--control-url", "unix://#{@socket}", "--control-token", "t0k", "stats")
    assert_equal [0, ""], [status, err]
    assert_equal "clitest", JSON.parse(out)["tag"]
  end

  def test_address_and_token_from_the_config_file_and_the_environment
    config = File.join(@dir, "heron.rb")
    File.write(config, "control_bind \"unix://#{@socket}\"\ncontrol_token \"t0k\"\n")
    assert_equal 0, ctl("-C", config, "stats").first
    File.write(config, "control_bind \"unix://#{@socket}\"\n")
    status, _, err = ctl("-C", config, "stats")
    assert_equal 1, status
    assert_includes err, "Unauthorized"
    ENV["HERON_CONTROL_TOKEN"] = "t0k"
    assert_equal 0, ctl("-C", config, "backtraces").first
  end

  def test_a_state_file_naming_a_process_that_is_gone_is_an_error_not_a_guess
    dead = Process.spawn("true")
    Process.wait(dead)
    File.write(state = File.join(@dir, "state.json"), JSON.generate("url" => "unix://#{@socket}", "pid" => dead))
    File.write(config = File.join(@dir, "heron.rb"), "control_state #{state.inspect}\ncontrol_token \"t0k\"\n")
    status, out, err = ctl("-C", config, "stats")
    assert_equal [1, ""], [status, out]
    assert_equal "heron ctl: #{state} names pid #{dead}, which is not running: start the server, or pass --control-url\n", err
    File.write(state, JSON.generate("url" => "unix://#{@socket}", "pid" => Process.pid))
    assert_equal 0, ctl("-C", config, "stats").first, "a live pid's address is used"
  end

  def test_usage_errors_exit_2_with_one_line_and_the_usage
    [[], %w[stats extra], %w[explode], %w[--nope stats]].each do |argv|
      status, out, err = ctl(*argv)
      assert_equal [2, ""], [status, out], argv.inspect
      assert_match(/\Aheron ctl: .*\nUsage: heron ctl/, err)
    end
    File.write(config = File.join(@dir, "off.rb"), "control_bind nil\n")
    assert_match(/control_bind is off/, ctl("-C", config, "stats")[2])
  end

  private

  def ctl(*argv)
    out = StringIO.new
    err = StringIO.new
    status = Heron::Control::CLI.new(argv, stdout: out, stderr: err).run
    [status, out.string, err.string]
  end
end
