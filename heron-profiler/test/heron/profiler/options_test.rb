# frozen_string_literal: true

require "test_helper"
require "heron/profiler"

# The profiler's options: from Heron's configuration (the adapter) or from keywords under another
# server, with the defaults and checks of the settings Heron's table marks as the profiler's.
class ProfilerOptionsTest < Minitest::Test
  Options = Heron::Profiler::Options

  def test_the_profiler_reads_the_settings_the_table_marks_as_its_own
    owned = Heron::Config::Settings.owned_by(:profiler)
    assert_includes owned, :profile_path
    assert_includes owned, :n_plus_one_safelist
    refute_includes owned, :profile, "whether to profile is the server's decision"
    assert_equal owned + %i[trusted_proxies workers], Options::NAMES
  end

  def test_the_adapter_copies_a_configuration
    config = Heron::Configuration.new(environment: "staging", profile_path: "/_p", workers: 2,
                                      trusted_proxies: ["10.0.0.0/8"], query_backtrace: 3)
    options = Options.for(config)
    assert_equal ["staging", "/_p", 2, 3], [options.environment_name, options.profile_path, options.workers, options.query_backtrace]
    assert_equal config.trusted_proxies, options.trusted_proxies
    assert_kind_of Heron::Log::Logger, options.logger
    assert_same options, Options.for(options)
  end

  def test_keywords_default_as_the_settings_do_and_are_checked
    options = Options.for(environment: "development", profile_sample: "10")
    assert_equal [10, "/__heron", 100, 2], [options.profile_sample, options.profile_path, options.profile_cpu_sample, options.n_plus_one_threshold]
    error = assert_raises(Heron::ConfigError) { Options.for(profile_path: "nope") }
    assert_match(/profile_path must be a path starting with \//, error.message)
    error = assert_raises(Heron::ConfigError) { Options.for(workers: 2, port: 80) }
    assert_match(/unknown profiler option :port/, error.message)
  end

  def test_wrap_takes_keywords_for_another_rack_server
    app = Heron::Profiler.wrap(->(_env) { [200, {}, ["ok"]] }, environment: "development", profile_path: "/_p", logger: Logger.new(nil))
    status, = app.call(Rack::MockRequest.env_for("/_p", "REMOTE_ADDR" => "127.0.0.1"))
    assert_equal 200, status
    _, headers, = app.call(Rack::MockRequest.env_for("/hello", "REMOTE_ADDR" => "127.0.0.1"))
    assert_match(/heron;desc=/, headers["server-timing"])
  end
end
