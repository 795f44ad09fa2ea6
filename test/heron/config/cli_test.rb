# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "open3"
require "net/http"
require "minitest/mock"
require "heron/config/cli"

class HeronConfigCLITest < Minitest::Test
  ROOT = File.expand_path("../../..", __dir__)

  def setup
    @stdout = StringIO.new
    @stderr = StringIO.new
  end

  def with_platform_env(values)
    saved = ENV.to_h.slice(*values.keys)
    values.each { |key, value| ENV[key] = value }
    yield
  ensure
    values.each_key { |key| ENV[key] = saved[key] }
  end

  def cli(*argv, **options)
    Heron::Config::CLI.new(argv, stdout: @stdout, stderr: @stderr, **options)
  end

  # Runs the block in an empty directory holding a config.ru.
  def in_app_dir
    Dir.mktmpdir do |dir|
      Dir.chdir(dir) do
        File.write("config.ru", "run ->(env) { [200, {}, ['ok']] }\n")
        yield dir
      end
    end
  end

  def parse(*argv)
    in_app_dir { cli(*argv).parse }
  end

  def assert_parse_error(message, *argv)
    error = assert_raises(Heron::ConfigError) { parse(*argv) }
    assert_equal message, error.message
  end

  def test_no_arguments_gives_the_defaults
    config = parse
    assert_equal Heron::Configuration.new.to_h.except(:log_io, :error_io),
                 config.to_h.except(:log_io, :error_io)
  end

  # [argv, setting, expected value]
  FLAGS = [
    [%w[-p 3000], :port, 3000], [%w[--port 3000], :port, 3000],
    [%w[-o 127.0.0.1], :host, "127.0.0.1"], [%w[--host ::1], :host, "::1"],
    [%w[-w 4], :workers, 4], [%w[--workers 0], :workers, 0],
    [%w[-t 2], :threads, 2], [%w[--threads 3], :threads, 3],
    [%w[-e production], :environment, "production"], [%w[--environment test], :environment, "test"],
    [%w[--preload], :preload, true], [%w[--no-preload], :preload, false],
    [%w[--max-connections 10], :max_connections, 10],
    [%w[--log-format json], :log_format, :json],
    [%w[-q], :quiet, true], [%w[--quiet], :quiet, true], [%w[--no-quiet], :quiet, false],
    [%w[--continue eager], :continue_mode, :eager],
    [%w[--profile], :profile, true], [%w[--no-profile], :profile, false],
    [%w[--metrics], :metrics, true], [%w[--no-metrics], :metrics, false],
    [%w[--metrics-bind tcp://0.0.0.0:9400], :metrics_bind, "tcp://0.0.0.0:9400"],
    [%w[--shutdown-timeout 2.5], :shutdown_timeout, 2.5],
    [%w[--first-byte-timeout 1], :first_byte_timeout, 1.0],
    [%w[--header-timeout 2], :header_timeout, 2.0],
    [%w[--keepalive-timeout 0], :keepalive_timeout, 0.0],
    [%w[--body-timeout 4], :body_timeout, 4.0],
    [%w[--write-timeout 5], :write_timeout, 5.0],
    [%w[--max-body-size 1024], :max_body_size, 1024], [%w[--max-body-size unlimited], :max_body_size, nil],
    [%w[--max-target-bytes 100], :max_target_bytes, 100],
    [%w[--max-header-bytes 1000], :max_header_bytes, 1000],
    [%w[--max-header-fields 20], :max_header_fields, 20],
    [%w[--rewindable-input], :rewindable_input, true],
    [%w[--body-spool-threshold 4096], :body_spool_threshold, 4096],
    [%w[--forwarded-proto], :forwarded_proto, true],
    [%w[--after-reply-concurrency 8], :after_reply_concurrency, 8],
    [%w[--bind unix:///tmp/h.sock], :binds, ["unix:///tmp/h.sock"]],
    [%w[-b tcp://127.0.0.1:1 -b tcp://[::1]:2], :binds, ["tcp://127.0.0.1:1", "tcp://[::1]:2"]],
  ].freeze

  def test_each_flag_sets_its_setting
    FLAGS.each do |argv, key, expected|
      actual = parse(*argv).public_send(key)
      expected.nil? ? assert_nil(actual, argv.join(" ")) : assert_equal(expected, actual, argv.join(" "))
    end
  end

  def test_every_setting_flag_has_a_dsl_directive
    directives = Heron::Config::DSL.public_instance_methods(false).map(&:to_s)
    Heron::Config::CLI::SETTING_FLAGS.each do |key, switches, _text|
      name = switches.last[/--(?:\[no-\])?([a-z0-9-]+)/, 1].tr("-", "_")
      assert_includes directives, name, "#{key} has no directive"
    end
  end

  # [argv, error message]
  INVALID = [
    [%w[--workers x], '--workers must be a non-negative integer (got "x")'],
    [%w[-w -1], '--workers must be a non-negative integer (got "-1")'],
    [%w[-p 80a], '--port must be a port number (0-65535) (got "80a")'],
    [%w[-p 65536], '--port must be a port number (0-65535) (got "65536")'],
    [%w[-t 0], '--threads must be a positive integer (got "0")'],
    [%w[--log-format xml], '--log-format must be one of common, json (got "xml")'],
    [%w[--continue later], '--continue must be one of lazy, eager (got "later")'],
    [%w[--keepalive-timeout soon], '--keepalive-timeout must be a non-negative number of seconds (got "soon")'],
    [%w[--max-body-size 0], '--max-body-size must be a positive integer or unlimited (got "0")'],
    [%w[-b http://x:1], '--bind must be a bind URI like tcp://HOST:PORT, ssl://HOST:PORT?cert=PATH&key=PATH or unix:///PATH (got "http://x:1")'],
    [%w[--frobnicate], "invalid option: --frobnicate (see heron --help)"],
    [%w[-w], "missing argument: -w (see heron --help)"],
    [%w[a.ru b.ru], 'unexpected argument "b.ru" (see heron --help)'],
    [%w[missing.ru], "rackup file missing.ru not found (usage: heron [options] [config.ru])"],
    [%w[-C missing.rb], "cannot read config file missing.rb: No such file or directory"],
  ].freeze

  def test_each_invalid_argument_raises_one_clear_error
    INVALID.each { |argv, message| assert_parse_error(message, *argv) }
  end

  def test_rackup_path_argument
    in_app_dir do
      File.write("app.ru", "run ->(env) { [200, {}, []] }\n")
      assert_equal "app.ru", cli("app.ru").parse.rackup
    end
  end

  def test_missing_config_ru_is_an_error_unless_the_config_file_sets_an_app
    Dir.mktmpdir do |dir|
      Dir.chdir(dir) do
        error = assert_raises(Heron::ConfigError) { cli.parse }
        assert_match(/rackup file config.ru not found/, error.message)
        File.write("app.rb", "app { |env| [200, {}, []] }\n")
        assert_respond_to cli("-C", "app.rb").parse.app, :call
      end
    end
  end

  def test_default_config_file_is_loaded_when_present
    in_app_dir do
      FileUtils.mkdir_p("config")
      File.write("config/heron.rb", "workers 2\nport 3000\n")
      config = cli.parse
      assert_equal [2, 3000], [config.workers, config.port]
    end
  end

  def test_explicit_config_file_replaces_the_default_one
    in_app_dir do
      FileUtils.mkdir_p("config")
      File.write("config/heron.rb", "workers 2\n")
      File.write("other.rb", "threads 3\n")
      config = cli("-C", "other.rb").parse
      assert_equal [0, 3], [config.workers, config.threads]
    end
  end

  def test_flags_win_over_the_config_file
    in_app_dir do
      File.write("heron.rb", "workers 2\nport 3000\nlog_format :json\n")
      config = cli("-C", "heron.rb", "-w", "4").parse
      assert_equal [4, 3000, :json], [config.workers, config.port, config.log_format]
    end
  end

  def test_listener_flags_replace_the_config_files_binds
    in_app_dir do
      File.write("heron.rb", %(bind "unix:///tmp/heron.sock"\n))
      assert_equal ["unix:///tmp/heron.sock"], cli("-C", "heron.rb").parse.bind_uris
      assert_equal ["tcp://0.0.0.0:4000"], cli("-C", "heron.rb", "-p", "4000").parse.bind_uris
      assert_equal ["tcp://127.0.0.1:1"], cli("-C", "heron.rb", "-b", "tcp://127.0.0.1:1").parse.bind_uris
    end
  end

  def test_config_file_sees_the_environment_flag
    in_app_dir do
      File.write("heron.rb", %(workers(environment == "production" ? 4 : 0)\n))
      assert_equal 4, cli("-C", "heron.rb", "-e", "production").parse.workers
    end
  end

  def test_config_file_errors_name_the_file
    in_app_dir do
      File.write("heron.rb", "workers 'many'\n")
      error = assert_raises(Heron::ConfigError) { cli("-C", "heron.rb").parse }
      assert_equal %(heron.rb:1: workers must be a non-negative integer (got "many")), error.message
    end
  end

  def test_version
    assert_nil cli("-v").parse
    assert_equal 0, cli("--version").run
    assert_equal "heron #{Heron::VERSION}\nheron #{Heron::VERSION}\n", @stdout.string
  end

  def test_help_lists_every_flag
    assert_equal 0, cli("-h").run
    text = @stdout.string
    assert_includes text, "Usage: heron [options] [config.ru]"
    Heron::Config::CLI::SETTING_FLAGS.each { |_key, switches, _| assert_includes text, switches.last }
    %w[--bind --config --version --help].each { |flag| assert_includes text, flag }
    assert_equal text, cli.help
  end

  def test_the_docs_list_every_flag
    docs = File.read(File.join(ROOT, "docs/configuration.md"))
    plugins = Heron::Config::Settings.all.select(&:owner).to_h { |setting| [setting.name, setting.owner] }
    Heron::Config::CLI::SETTING_FLAGS.each do |key, switches, _|
      text = plugins[key] ? File.read(File.join(ROOT, plugins[key], "README.md")) : docs # a plugin's in its README
      assert_includes text, "`#{switches.last}`"
    end
  end

  def test_help_and_version_together_print_once
    cli("-h", "-v").run
    assert_equal 1, @stdout.string.scan("Usage:").size
    refute_includes @stdout.string, "heron #{Heron::VERSION}"
  end

  def test_run_returns_2_and_prints_one_line_for_an_error
    assert_equal 2, cli("--workers", "x").run
    assert_equal %(heron: --workers must be a non-negative integer (got "x")\n), @stderr.string
    assert_empty @stdout.string
  end

  def test_run_launches_the_configuration_and_sets_the_environment
    launched = nil
    saved = ENV.to_h.slice("RACK_ENV", "APP_ENV")
    status = in_app_dir { cli("-e", "staging", "-w", "2", launcher: ->(config) { launched = config; 7 }).run }
    assert_equal 7, status
    assert_equal [2, "staging"], [launched.workers, launched.environment]
    assert_equal %w[staging staging], [ENV["RACK_ENV"], ENV["APP_ENV"]]
  ensure
    %w[RACK_ENV APP_ENV].each { |key| ENV[key] = saved[key] }
  end

  def test_run_sets_rails_env_too_when_it_is_set
    saved = ENV.to_h.slice("RACK_ENV", "APP_ENV", "RAILS_ENV")
    ENV["RAILS_ENV"] = "development"
    in_app_dir { cli("-e", "production", launcher: ->(_config) { 0 }).run }
    assert_equal %w[production production production], ENV.values_at("RACK_ENV", "APP_ENV", "RAILS_ENV")
  ensure
    %w[RACK_ENV APP_ENV RAILS_ENV].each { |key| ENV[key] = saved[key] }
  end

  def test_web_concurrency_and_port_count_unless_a_flag_or_directive_sets_them
    with_platform_env("WEB_CONCURRENCY" => "3", "PORT" => "8123") do
      assert_equal [3, ["tcp://0.0.0.0:8123"]], parse.then { |config| [config.workers, config.bind_uris] }
      assert_equal [0, ["tcp://0.0.0.0:4000"]], parse("-w", "0", "-p", "4000").then { |config| [config.workers, config.bind_uris] }
      in_app_dir do
        File.write("heron.rb", "workers 1\nport 4001\n")
        config = cli("-C", "heron.rb").parse
        assert_equal [1, ["tcp://0.0.0.0:4001"]], [config.workers, config.bind_uris]
      end
      assert_equal ["tcp://127.0.0.1:5"], parse("-b", "tcp://127.0.0.1:5").bind_uris
    end
  end

  def test_run_treats_a_non_integer_launcher_result_as_success
    assert_equal 0, in_app_dir { cli(launcher: ->(_config) { true }).run }
  end

  def test_run_reports_a_config_error_raised_while_launching
    launcher = ->(_config) { raise Heron::ConfigError, "no app" }
    assert_equal 2, in_app_dir { cli(launcher: launcher).run }
    assert_equal "heron: no app\n", @stderr.string
  end

  def test_attack_dispatches_the_rest_of_the_arguments
    seen = nil
    attack = lambda do |argv, stdout:, stderr:|
      seen = [argv, stdout, stderr]
      3
    end
    assert_equal 3, cli("attack", "-c", "10", "http://x/", attack: attack).run
    assert_equal [%w[-c 10 http://x/], @stdout, @stderr], seen
  end

  def test_default_launcher_runs_heron_launcher
    in_app_dir do
      config = cli("-b", "tcp://127.0.0.1:0").parse
      launcher = Object.new
      def launcher.run = 5
      Heron::Launcher.stub(:new, ->(given) { given.equal?(config) ? launcher : flunk }) do
        assert_equal 5, Heron::Config::CLI.allocate.send(:launch_server, config)
      end
    end
  end
end

# The installed command: a fresh process, real exit statuses.
class HeronExeTest < Minitest::Test
  ROOT = File.expand_path("../../..", __dir__)

  def heron(*argv)
    Open3.capture3("bundle", "exec", File.join(ROOT, "exe/heron"), *argv,
                   chdir: ROOT, unsetenv_others: false)
  end

  def test_invalid_option_exits_2_with_one_line_on_stderr
    stdout, stderr, status = heron("--workers", "x")
    assert_equal 2, status.exitstatus
    assert_equal %(heron: --workers must be a non-negative integer (got "x")\n), stderr
    assert_empty stdout
  end

  def test_version_exits_0
    stdout, _stderr, status = heron("--version")
    assert_equal 0, status.exitstatus
    assert_equal "heron #{Heron::VERSION}\n", stdout
  end

  def test_missing_rackup_file_exits_2
    _stdout, stderr, status = heron("no/such/config.ru")
    assert_equal 2, status.exitstatus
    assert_equal "heron: rackup file no/such/config.ru not found (usage: heron [options] [config.ru])\n", stderr
  end

  def test_serves_the_config_files_app_and_logs_the_request
    Dir.mktmpdir do |dir|
      File.write(File.join(dir, "heron.rb"), %(app { |env| [200, {}, ["hi"]] }\nquiet false\n))
      port = TCPServer.open("127.0.0.1", 0) { |server| server.addr[1] }
      log = File.join(dir, "out.log")
      pid = Process.spawn("bundle", "exec", File.join(ROOT, "exe/heron"), "-C", "heron.rb", "-b",
                          "tcp://127.0.0.1:#{port}", "--no-profile", chdir: dir, out: log, err: [:child, :out],
                          pgroup: true)
      assert_equal "hi", fetch(port, log)
      Process.kill("TERM", pid)
      Timeout.timeout(PATIENCE) { Process.wait(pid) }
      pid = nil
      assert_match %r{"GET /ok HTTP/1.1" 200 2 }, File.read(log)
    ensure
      Process.kill("KILL", -pid) if pid
    end
  end

  # A container that sets only RAILS_ENV and PORT, as platforms do: production, so no profiler
  # header leaves the process, on the platform's port.
  def test_rails_env_and_port_from_the_platform
    Dir.mktmpdir do |dir|
      File.write(File.join(dir, "config.ru"), %(run ->(env) { [200, {}, [ENV["RACK_ENV"].to_s]] }\n))
      port = TCPServer.open("127.0.0.1", 0) { |server| server.addr[1] }
      log = File.join(dir, "out.log")
      env = { "RAILS_ENV" => "production", "PORT" => port.to_s, "APP_ENV" => nil, "RACK_ENV" => nil, "WEB_CONCURRENCY" => nil }
      pid = Process.spawn(env, "bundle", "exec", File.join(ROOT, "exe/heron"), "-o", "127.0.0.1",
                          chdir: dir, out: log, err: log, pgroup: true)
      response = fetch_response(port, log)
      assert_equal "production", response.body
      refute response.key?("server-timing")
      assert_includes File.read(log), "production environment"
      Process.kill("TERM", pid)
      Timeout.timeout(PATIENCE) { Process.wait(pid) }
      pid = nil
    ensure
      Process.kill("KILL", -pid) if pid
    end
  end

  private

  def fetch_response(port, log)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + PATIENCE
    begin
      Net::HTTP.get_response(URI("http://127.0.0.1:#{port}/ok"))
    rescue Errno::ECONNREFUSED
      flunk("heron did not start:\n#{File.read(log)}") if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      sleep 0.2
      retry
    end
  end

  def fetch(port, log) = fetch_response(port, log).body
end
