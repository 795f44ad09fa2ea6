# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "open3"
require "net/http"

# The server without its two other gems: a Ruby whose load path has the core's lib/ and the
# installed gems, but neither heron-profiler nor heron-attack (no Bundler, no -I for them). It
# serves in development with profiling off instead of failing on boot (the server's metrics still
# on, as in development with the profiler), loads nothing of either,
# and `heron attack` and `--profile` say how to install what they need.
class HeronCoreAloneTest < Minitest::Test
  LIB = File.expand_path("../../lib", __dir__)
  EXE = File.expand_path("../../exe/heron", __dir__)
  CLEAN = { "RUBYOPT" => nil, "RUBYLIB" => nil, "BUNDLE_GEMFILE" => nil, "BUNDLE_BIN_PATH" => nil,
            "RACK_ENV" => nil, "APP_ENV" => nil, "RAILS_ENV" => nil }.freeze

  SCRIPT = <<~'RUBY'
    require "heron"
    require "net/http"
    app = ->(_env) { [200, { "content-type" => "text/plain" }, ["served"]] }
    config = Heron::Configuration.new(binds: ["tcp://127.0.0.1:0"], log_io: File.open(File::NULL, "w"))
    server = Heron::Server.new(Heron::AppLoader.load(config.tap { |c| c.app = app }), config).bind
    thread = Thread.new { server.run }
    server.wait_until_running(15)
    response = Net::HTTP.get_response(URI("http://127.0.0.1:#{server.bound_ports.first}/"))
    server.stop(graceful: false)
    thread.join
    puts config.environment_name, config.metrics?, response.body, response["server-timing"].inspect,
         $LOADED_FEATURES.grep(%r{heron/(profiler|attack)|profiler_ext}).size, defined?(Heron::Profiler).inspect
  RUBY

  def setup
    found, = Open3.capture2e(CLEAN, Gem.ruby, "-e", 'print Gem.find_files("heron/{profiler,attack}.rb").join(" ")')
    skip "heron-profiler or heron-attack is installed machine-wide (#{found}): this test needs a Ruby without them" unless found.empty?
  end

  def test_the_server_serves_in_development_with_profiling_off_and_loads_neither_gem
    out, status = Open3.capture2e(CLEAN, Gem.ruby, "-I", LIB, "-e", SCRIPT)
    assert status.success?, out
    assert_equal "development\ntrue\nserved\nnil\n0\nnil\n", out, "metrics on, as in development before the split"
  end

  def test_heron_attack_says_how_to_install_the_load_generator
    out, status = Open3.capture2e(CLEAN, Gem.ruby, "-I", LIB, EXE, "attack", "http://127.0.0.1:9/", "-n", "1")
    assert_equal 127, status.exitstatus, out
    assert_includes out, "heron attack: the load generator is the heron-attack gem, which is not installed."
    assert_includes out, "gem install heron-attack"
    refute_includes out, "LoadError"
  end

  def test_profile_on_without_the_profiler_says_how_to_install_it
    Dir.mktmpdir("heron-alone") do |dir|
      File.write(File.join(dir, "config.ru"), "run ->(_env) { [200, {}, []] }\n")
      out, status = Open3.capture2e(CLEAN, Gem.ruby, "-I", LIB, EXE, "--profile", "-b", "tcp://127.0.0.1:0",
                                    "--control-bind", "tcp://127.0.0.1:0", "config.ru", chdir: dir)
      assert_equal 1, status.exitstatus, out
      assert_includes out, "the heron-profiler gem is not installed: add `gem \"heron-profiler\"` to the Gemfile's development group"
    end
  end

  def test_a_profiler_setting_without_the_profiler_is_an_error_naming_the_gem
    Dir.mktmpdir("heron-alone") do |dir|
      File.write(File.join(dir, "config.ru"), "run ->(_env) { [200, {}, []] }\n")
      File.write(File.join(dir, "heron.rb"), "n_plus_one_threshold 3\n")
      flag, status = Open3.capture2e(CLEAN, Gem.ruby, "-I", LIB, EXE, "--profile-sample", "10", "config.ru", chdir: dir)
      assert_equal 2, status.exitstatus, flag
      assert_includes flag, "invalid option: --profile-sample (see heron --help; profile_sample is a setting of the heron-profiler gem, " \
                            "which is not installed: add `gem \"heron-profiler\"` to the Gemfile)"
      directive, status = Open3.capture2e(CLEAN, Gem.ruby, "-I", LIB, EXE, "-C", "heron.rb", "config.ru", chdir: dir)
      assert_equal 2, status.exitstatus, directive
      assert_includes directive, "heron.rb:1: unknown directive n_plus_one_threshold"
      assert_includes directive, "n_plus_one_threshold is a setting of the heron-profiler gem, which is not installed"
    end
  end
end
