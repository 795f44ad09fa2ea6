# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "open3"
require "net/http"
require "minitest/mock"
require "rackup"
require "rackup/handler/heron"
require "heron/launcher"

class RackupHandlerHeronTest < Minitest::Test
  include EnvHelper

  ROOT = File.expand_path("../../..", __dir__)
  HANDLER = Rackup::Handler::Heron
  APP = ->(_env) { [200, { "content-type" => "text/plain" }, ["ok"]] }

  def test_rackup_finds_the_handler_by_name
    assert_same HANDLER, Rackup::Handler.get("heron")
    assert_same HANDLER, Rackup::Handler.get(:heron)
  end

  # Rails' `rails server -u heron` and `rackup -s heron` both end in Rackup::Handler.get(name),
  # which requires "rackup/handler/heron" when nothing registered the name yet.
  def test_a_fresh_process_finds_the_handler_through_require
    script = 'require "rackup"; print Rackup::Handler.get("heron").name'
    stdout, stderr, status = Open3.capture3("bundle", "exec", "ruby", "-e", script, chdir: ROOT)
    assert status.success?, stderr
    assert_equal "Rackup::Handler::Heron", stdout
  end

  def test_rackup_options_become_settings
    config = HANDLER.configuration(APP, Host: "127.0.0.1", Port: "3001", environment: "test",
                                        Workers: "2", Threads: 3, Quiet: true, Log_format: "json",
                                        daemonize: false, pid: nil, config: "config.ru")
    assert_same APP, config.app
    assert_equal ["tcp://127.0.0.1:3001"], config.bind_uris
    assert_equal ["test", 2, 3, true, :json],
                 [config.environment, config.workers, config.threads, config.quiet, config.log_format]
  end

  def test_dash_o_strings_are_coerced
    config = HANDLER.configuration(APP, "Preload" => "true", "Shutdown_timeout" => "5",
                                        "Max_connections" => "10", "Bind" => "unix:///tmp/h.sock")
    assert_equal [true, 5.0, 10, ["unix:///tmp/h.sock"]],
                 [config.preload, config.shutdown_timeout, config.max_connections, config.bind_uris]
  end

  def test_invalid_option_names_the_option
    error = assert_raises(Heron::ConfigError) { HANDLER.configuration(APP, Port: "http") }
    assert_equal 'Port must be a port number (0-65535) (got "http")', error.message
  end

  def test_config_file_is_read_and_given_options_win
    in_dir("workers 2\nport 4000\nthreads 2\n") do
      config = HANDLER.configuration(APP, Port: 5000)
      assert_equal [2, 2, ["tcp://0.0.0.0:5000"]], [config.workers, config.threads, config.bind_uris]
    end
  end

  # rackup's own default (`development` when neither -E nor RACK_ENV says) does not beat
  # RAILS_ENV or the config file; a name the user chose does.
  def test_rackups_default_environment_yields_to_rails_env_and_the_config_file
    with_env("RAILS_ENV" => "production", "APP_ENV" => nil, "RACK_ENV" => "development") do
      in_dir(nil) do
        assert_equal "production", HANDLER.configuration(APP, environment: "development").environment_name
        assert_equal "staging", HANDLER.configuration(APP, environment: "staging").environment_name
      end
      in_dir(%(environment "test"\n)) do
        assert_equal "test", HANDLER.configuration(APP, environment: "development").environment_name
      end
    end
  end

  def test_rails_defaults_yield_to_the_config_file
    in_dir("port 4000\n") do
      options = { Host: "localhost", Port: 3000, environment: "production", user_supplied_options: [:environment] }
      config = HANDLER.configuration(APP, options)
      assert_equal ["tcp://localhost:4000", "production"], [config.bind_uris.first, config.environment]
    end
  end

  def test_rails_defaults_apply_without_a_config_file
    in_dir(nil) do
      config = HANDLER.configuration(APP, Host: "localhost", Port: 3000, user_supplied_options: [])
      assert_equal ["tcp://localhost:3000"], config.bind_uris
    end
  end

  def test_config_file_binds_are_replaced_by_a_given_port
    in_dir(%(bind "unix:///tmp/h.sock"\n)) do
      assert_equal ["unix:///tmp/h.sock"], HANDLER.configuration(APP, Port: 1, user_supplied_options: []).bind_uris
      assert_equal ["tcp://0.0.0.0:1"], HANDLER.configuration(APP, Port: 1).bind_uris
    end
  end

  def test_valid_options_are_listed_for_rackup_help
    assert_includes HANDLER.valid_options.keys, "Workers=COUNT"
    assert(HANDLER.valid_options.all? { |name, text| name.is_a?(String) && !text.empty? })
  end

  def test_run_yields_the_launcher_and_returns_its_status
    launcher = Struct.new(:config) { def run = 6 }
    yielded = nil
    Heron::Launcher.stub(:new, ->(config) { launcher.new(config) }) do
      assert_equal 6, HANDLER.run(APP, Port: 0) { |given| yielded = given }
    end
    assert_same APP, yielded.config.app
  end

  def test_run_without_a_block
    Heron::Launcher.stub(:new, ->(_config) { Struct.new(:run).new(0) }) do
      assert_equal 0, HANDLER.run(APP)
    end
  end

  def test_run_exits_2_on_a_bad_option
    _out, err = capture_io do
      error = assert_raises(SystemExit) { HANDLER.run(APP, Port: "x") }
      assert_equal 2, error.status
    end
    assert_equal %(heron: Port must be a port number (0-65535) (got "x")\n), err
  end

  def test_rackup_dash_s_heron_serves_requests
    Dir.mktmpdir do |dir|
      File.write(File.join(dir, "hello.ru"), %(run ->(env) { [200, {"content-type" => "text/plain"}, ["hello"]] }\n))
      port = free_port
      serve(%W[bundle exec rackup -s heron -o 127.0.0.1 -p #{port} hello.ru], dir) do |log|
        response = get(port, log)
        assert_equal ["200", "hello"], [response.code, response.body]
      end
    end
  end

  # rackup wraps the app in Rack::CommonLogger in development; Heron's access log stays off then.
  def test_rackup_in_development_logs_each_request_once
    Dir.mktmpdir do |dir|
      File.write(File.join(dir, "hello.ru"), %(run ->(env) { [200, {"content-type" => "text/plain"}, ["hello"]] }\n))
      FileUtils.mkdir_p(File.join(dir, "config"))
      File.write(File.join(dir, "config/heron.rb"), "metrics false\n") # 9393 may be another server's
      port = free_port
      serve(%W[bundle exec rackup -s heron -E development -o 127.0.0.1 -p #{port} hello.ru], dir) do |log|
        get(port, log, "/logged-once")
        get(port, log, "/second")
        Timeout.timeout(PATIENCE) { sleep 0.05 until File.read(log).include?("/second") }
        sleep 0.3
        assert_equal 1, File.read(log).scan("GET /logged-once").size, File.read(log)
      end
    end
  end

  def test_common_logger_in_the_chain_turns_the_access_log_off_unless_asked
    logged = Rack::ContentLength.new(Rack::CommonLogger.new(APP))
    refute HANDLER.configuration(logged, {}).log_requests
    assert HANDLER.configuration(logged, { Log_requests: "true" }).log_requests
    assert HANDLER.configuration(Rack::ContentLength.new(APP), {}).log_requests
  end

  # What `rails server -u heron` does once Rails has parsed its flags: a Rackup::Server
  # subclass with Rails' extra options, user_supplied_options among them.
  def test_a_rails_style_server_start_serves_requests
    Dir.mktmpdir do |dir|
      File.write(File.join(dir, "config.ru"), %(run ->(env) { [200, {}, [env["PATH_INFO"]]] }\n))
      port = free_port
      script = <<~RUBY
        require "rackup"
        Rackup::Server.new(server: "heron", Host: "127.0.0.1", Port: #{port}, environment: "development",
                           config: "config.ru", daemonize: false, pid: nil, caching: nil, restart_cmd: nil,
                           early_hints: nil, log_stdout: true, user_supplied_options: %i[server Port]).start
      RUBY
      serve(["bundle", "exec", "ruby", "-e", script], dir) do |log|
        response = get(port, log, "/rails")
        assert_equal ["200", "/rails"], [response.code, response.body]
      end
    end
  end

  RAILS_APP = {
    "config/application.rb" => <<~RUBY,
      require "rails"
      require "action_controller/railtie"
      class HeronRailsCheck < Rails::Application
        config.root = File.expand_path("..", __dir__)
        config.eager_load = false
        config.secret_key_base = "x" * 64
        config.hosts.clear
        routes.append { root to: proc { [200, { "content-type" => "text/plain" }, ["rails ok"]] } }
      end
    RUBY
    "config/environment.rb" => %(require_relative "application"\nRails.application.initialize!\n),
    "config.ru" => %(require_relative "config/environment"\nrun Rails.application\n),
    "bin/rails" => %(APP_PATH = File.expand_path("../config/application", __dir__)\nrequire "rails/commands"\n),
  }.freeze

  # Rails is not in the bundle: installing railties takes minutes (it builds nokogiri). To run
  # `rails server -u heron` for real, install it aside and point HERON_RAILS_GEM_HOME at it:
  #   gem install railties -v "~> 7.1.0" --no-document --install-dir /tmp/rails-gems
  def test_rails_server_dash_u_heron
    gem_home = ENV["HERON_RAILS_GEM_HOME"] or skip "railties is not installed (bin/setup-rails installs it; bin/test runs it)"
    Dir.mktmpdir do |dir|
      RAILS_APP.each { |path, text| write_file(File.join(dir, path), text) }
      port = free_port
      env = { "GEM_HOME" => gem_home, "GEM_PATH" => [gem_home, *Gem.path].join(File::PATH_SEPARATOR) }
      command = ["ruby", "-I", File.join(ROOT, "lib"), "bin/rails", "server", "-u", "heron",
                 "-b", "127.0.0.1", "-p", port.to_s]
      Bundler.with_unbundled_env do
        serve_with(env, command, dir) { |log| assert_equal "rails ok", get(port, log).body }
      end
    end
  end

  private

  def in_dir(config_source)
    Dir.mktmpdir do |dir|
      Dir.chdir(dir) do
        FileUtils.mkdir_p("config")
        File.write("config/heron.rb", config_source) if config_source
        yield
      end
    end
  end

  def write_file(path, text)
    FileUtils.mkdir_p(File.dirname(path))
    File.write(path, text)
  end

  # Spawns a server command in the bundle, yields its log file path, and stops it with SIGTERM.
  def serve(command, dir, &block)
    serve_with({ "BUNDLE_GEMFILE" => File.join(ROOT, "Gemfile") }, command, dir, &block)
  end

  def serve_with(env, command, dir)
    log = File.join(dir, "server.log")
    pid = Process.spawn(env, *command, chdir: dir, out: log, err: [:child, :out], pgroup: true)
    yield log
  ensure
    stop(pid) if pid
  end

  def stop(pid)
    Process.kill("TERM", -pid)
    Timeout.timeout(PATIENCE) { Process.wait(pid) }
  rescue Timeout::Error
    Process.kill("KILL", -pid)
    Process.wait(pid)
  rescue Errno::ESRCH, Errno::ECHILD
    nil
  end

  def get(port, log, path = "/")
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + PATIENCE
    begin
      Net::HTTP.start("127.0.0.1", port, open_timeout: 1, read_timeout: 5) { |http| http.get(path) }
    rescue Errno::ECONNREFUSED, Errno::ECONNRESET, Net::OpenTimeout
      flunk("server did not start:\n#{File.read(log)}") if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      sleep 0.2
      retry
    end
  end
end
