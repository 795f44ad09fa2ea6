# frozen_string_literal: true

require "test_helper"
require "heron/profiler"

# The profiler's options: from Heron's configuration (the adapter) or from keywords under another
# server, with the defaults and checks of the settings the profiler declares (Profiler::Settings),
# which Heron's table takes in when the gem is installed.
class ProfilerOptionsTest < Minitest::Test
  Options = Heron::Profiler::Options

  def test_the_profiler_declares_its_settings_and_herons_table_takes_them_in
    declared = Heron::Profiler::Settings::ALL.map { |setting| setting[:name] }
    assert_includes declared, :profile_path
    assert_includes declared, :n_plus_one_safelist
    refute_includes declared, :profile, "whether to profile is the server's decision"
    assert_equal declared + %i[trusted_proxies workers], Options::NAMES
    require "heron/configuration"
    assert_equal declared, Heron::Config::Settings.owned_by("heron-profiler")
    refute_includes Heron::Config::Settings::ALL.map(&:name), :profile_path, "the server declares none of them"
  end

  def test_the_adapter_copies_a_configuration
    config = Heron::Configuration.new(environment: "staging", profile_path: "/_p", workers: 2,
                                      trusted_proxies: ["10.0.0.0/8"], query_backtrace: 3)
    options = Options.for(config)
    assert_equal ["staging", "/_p", 2, 3], [options.environment_name, options.profile_path, options.workers, options.query_backtrace]
    assert_equal config.trusted_proxies, options.trusted_proxies
    assert_kind_of ::Logger, options.logger, "Heron passes its own logger to wrap (AppLoader)"
    assert_same options, Options.for(options)
    bare = Struct.new(:environment_name, :trusted_proxies, :workers).new("test", [], 0) # a table without this gem's settings
    assert_equal ["/__heron", 1, []], Options.for(bare).then { |o| [o.profile_path, o.profile_sample, o.n_plus_one_safelist] }
  end

  def test_keywords_default_as_the_settings_do_and_are_checked
    options = Options.for(environment: "development", profile_sample: "10")
    assert_equal [10, "/__heron", 100, 2], [options.profile_sample, options.profile_path, options.profile_cpu_sample, options.n_plus_one_threshold]
    assert_equal [["10.0.0.0/8", "::1"], ["a.rb", "posts"]],
                 Options.for(trusted_proxies: "10.0.0.0/8, ::1", n_plus_one_safelist: "a.rb,posts").then { |o| [o.trusted_proxies, o.n_plus_one_safelist] }
    {
      { profile_path: "nope" } => 'profiler option profile_path: expected a path starting with /, got "nope"',
      { profile_sample: 0 } => "profiler option profile_sample: expected a whole number >= 1, got 0",
      { workers: "x" } => 'profiler option workers: expected a whole number >= 0, got "x"',
      { trusted_proxies: ["10.0.0.0/8", "nope"] } => 'profiler option trusted_proxies: expected a list of IP addresses or CIDRs like 10.0.0.0/8, got ["10.0.0.0/8", "nope"]',
      { n_plus_one_safelist: ["x" * 300] } => "profiler option n_plus_one_safelist: expected entries of at most 256 bytes",
      { profile_token: 5 } => "profiler option profile_token: expected a non-empty string, got 5",
      { profile_token: "" } => 'profiler option profile_token: expected a non-empty string, got ""',
    }.each do |keywords, message|
      error = assert_raises(Heron::Profiler::OptionError, keywords.inspect) { Options.for(keywords) }
      assert error.message.start_with?(message), error.message
    end
    error = assert_raises(Heron::Profiler::OptionError) { Options.for(workers: 2, port: 80) }
    assert_match(/unknown profiler option :port/, error.message)
  end

  def test_wrap_takes_keywords_for_another_rack_server
    app = Heron::Profiler.wrap(->(_env) { [200, {}, ["ok"]] }, environment: "development", profile_path: "/_p",
                               logger: Logger.new(nil), thread_allocations: false) # the hook would stay on for every later test
    status, = app.call(Rack::MockRequest.env_for("/_p", "REMOTE_ADDR" => "127.0.0.1"))
    assert_equal 200, status
    _, headers, = app.call(Rack::MockRequest.env_for("/hello", "REMOTE_ADDR" => "127.0.0.1"))
    assert_match(/heron;desc=/, headers["server-timing"])
  end
end
