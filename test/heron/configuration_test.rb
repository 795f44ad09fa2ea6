# frozen_string_literal: true

require "test_helper"

class HeronConfigurationTest < Minitest::Test
  include EnvHelper
  def test_every_setting_has_a_type
    assert_equal Heron::Configuration::DEFAULTS.keys.sort, Heron::Configuration::TYPES.keys.sort
  end

  def test_defaults
    config = Heron::Configuration.new
    assert_equal 9292, config.port
    assert_equal :common, config.log_format
    assert_equal ["tcp://0.0.0.0:9292"], config.bind_uris
    assert_equal Heron::Configuration::DEFAULTS.keys, config.to_h.keys
  end

  def test_each_default_passes_its_own_check
    config = Heron::Configuration.new
    Heron::Configuration::DEFAULTS.each do |key, value|
      config.set(key, value)
      value.nil? ? assert_nil(config.public_send(key), key) : assert_equal(value, config.public_send(key), key)
    end
  end

  def test_defaults_are_not_shared_between_instances
    first = Heron::Configuration.new
    first.before_fork << -> {}
    assert_empty Heron::Configuration.new.before_fork
  end

  def test_overrides_are_coerced
    config = Heron::Configuration.new(workers: "3", log_format: "json", keepalive_timeout: "1.5",
                                      binds: "unix:///tmp/h.sock")
    assert_equal 3, config.workers
    assert_equal :json, config.log_format
    assert_equal 1.5, config.keepalive_timeout
    assert_equal ["unix:///tmp/h.sock"], config.bind_uris
  end

  def test_set_returns_the_coerced_value_and_names_the_label
    config = Heron::Configuration.new
    assert_equal 8, config.set(:threads, "8")
    error = assert_raises(Heron::ConfigError) { config.set(:threads, "0", label: "--threads") }
    assert_equal '--threads must be a positive integer (got "0")', error.message
  end

  def test_unknown_setting
    error = assert_raises(Heron::ConfigError) { Heron::Configuration.new(wokers: 2) }
    assert_equal "unknown setting :wokers", error.message
  end

  def test_bind_uris_bracket_ipv6_hosts
    assert_equal ["tcp://[::1]:80"], Heron::Configuration.new(host: "::1", port: 80).bind_uris
  end

  def test_environment_name_prefers_the_setting_then_app_env_then_rack_env
    with_env("APP_ENV" => nil, "RACK_ENV" => nil, "RAILS_ENV" => nil) do
      assert_equal "development", Heron::Configuration.new.environment_name
      ENV["RACK_ENV"] = "staging"
      assert_equal "staging", Heron::Configuration.new.environment_name
      ENV["APP_ENV"] = "test"
      assert_equal "test", Heron::Configuration.new.environment_name
      assert_equal "production", Heron::Configuration.new(environment: "production").environment_name
    end
  end

  # Puma reads APP_ENV, RACK_ENV, RAILS_ENV; Heron puts RAILS_ENV before RACK_ENV, as Rails does.
  def test_environment_name_app_env_then_rails_env_then_rack_env_and_empty_means_unset
    with_env("APP_ENV" => nil, "RACK_ENV" => "development", "RAILS_ENV" => "production") do
      assert_equal "production", Heron::Configuration.new.environment_name
      refute Heron::Configuration.new.profile?, "a Rails container that sets only RAILS_ENV is not profiled"
      ENV["APP_ENV"] = "staging"
      assert_equal "staging", Heron::Configuration.new.environment_name
      ENV["APP_ENV"] = ""
      ENV["RAILS_ENV"] = " "
      assert_equal "development", Heron::Configuration.new.environment_name
    end
  end

  def test_platform_variables_fill_only_what_nothing_else_set
    config = Heron::Configuration.new.apply_platform_env({ "WEB_CONCURRENCY" => "3", "PORT" => "8080" })
    assert_equal [3, 8080, ["tcp://0.0.0.0:8080"]], [config.workers, config.port, config.bind_uris]
    config = Heron::Configuration.new(workers: 0, port: 4000).apply_platform_env({ "WEB_CONCURRENCY" => "3", "PORT" => "8080" })
    assert_equal [0, 4000], [config.workers, config.port]
    config = Heron::Configuration.new.apply_platform_env({ "WEB_CONCURRENCY" => "3", "PORT" => "8080" }, given: %i[workers port])
    assert_equal [0, 9292], [config.workers, config.port]
    config = Heron::Configuration.new(binds: ["tcp://127.0.0.1:1"]).apply_platform_env({ "PORT" => "8080" })
    assert_equal ["tcp://127.0.0.1:1"], config.bind_uris
    assert_equal Etc.nprocessors, Heron::Configuration.new.apply_platform_env({ "WEB_CONCURRENCY" => "auto" }).workers
    assert_equal [0, 9292], Heron::Configuration.new.apply_platform_env({ "WEB_CONCURRENCY" => "", "PORT" => "" }).then { |c| [c.workers, c.port] }
  end

  def test_bad_platform_variables_are_named
    error = assert_raises(Heron::ConfigError) { Heron::Configuration.new.apply_platform_env({ "WEB_CONCURRENCY" => "many" }) }
    assert_equal 'WEB_CONCURRENCY must be a non-negative integer (got "many")', error.message
    error = assert_raises(Heron::ConfigError) { Heron::Configuration.new.apply_platform_env({ "PORT" => "http" }) }
    assert_equal 'PORT must be a port number (0-65535) (got "http")', error.message
  end

  # On in development only with heron-profiler installed: its own tests check that, and
  # test/heron/core_alone_test.rb that a server without it serves unprofiled.
  def test_profile_and_metrics_follow_the_environment_unless_set
    refute Heron::Configuration.new(environment: "production").profile?
    assert Heron::Configuration.new(environment: "production", profile: true).profile?
    assert Heron::Configuration.new(environment: "development").metrics?
    refute Heron::Configuration.new(environment: "development", metrics: false).metrics?
  end
end
