# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "heron/config/cli"
require "heron/profiler"

# The profiler declares its settings once (Heron::Profiler::Settings); with the gem installed,
# Heron's settings table takes them in, so a config file's directive and a command-line flag reach
# the profiler's options through the server's configuration, checked as the server checks its own.
class ProfilerSettingsTest < Minitest::Test
  def parse(*argv)
    Heron::Config::CLI.new(argv, stdout: StringIO.new, stderr: StringIO.new).parse
  end

  def test_flags_and_directives_reach_the_profilers_options
    Dir.mktmpdir("heron-profiler-settings") do |dir|
      File.write(File.join(dir, "config.ru"), "run ->(_env) { [200, {}, []] }\n")
      File.write(File.join(dir, "heron.rb"), "profile_path \"/_debug\"\nn_plus_one_safelist \"a.rb\", \"posts\"\nprofile_sample 5\n")
      config = Dir.chdir(dir) { parse("-C", "heron.rb", "--profile-sample", "10", "--n-plus-one-threshold", "4", "config.ru") }
      options = Heron::Profiler::Options.for(config)
      assert_equal ["/_debug", 10, 4, %w[a.rb posts]],
                   [options.profile_path, options.profile_sample, options.n_plus_one_threshold, options.n_plus_one_safelist],
                   "the flag wins over the file, as for the server's own settings"
    end
  end

  # The rules Heron's table keeps (test/heron/config/settings_test.rb), checked here too: the
  # core's suite runs without this gem, so only this suite sees its declarations.
  def test_its_declarations_keep_the_tables_rules
    faults = Heron::Config::Settings.faults.select { |fault| Heron::Profiler::Settings::ALL.any? { |setting| fault.start_with?("#{setting[:name]}:") } }
    assert_empty faults
    assert_equal ["heron-profiler"], Heron::Config::Settings.all.select(&:owner).map(&:group).uniq,
                 "its settings are listed under its own heading, in its README"
  end

  def test_each_directive_sets_its_setting
    {
      'profile_path "/_p"' => [:profile_path, "/_p"], "profile_sample 20" => [:profile_sample, 20],
      "profile_cpu_sample 3" => [:profile_cpu_sample, 3], 'profile_token "s3cret"' => [:profile_token, "s3cret"],
      "n_plus_one_threshold 5" => [:n_plus_one_threshold, 5], "query_backtrace 1" => [:query_backtrace, 1],
      'query_backtrace_exclude "vendor"' => [:query_backtrace_exclude, ["vendor"]],
      'n_plus_one_safelist "users", "app/a.rb:3"' => [:n_plus_one_safelist, %w[users app/a.rb:3]],
    }.each do |source, (key, expected)|
      config = Heron::Configuration.new
      Heron::Config::DSL.new(config, "heron.rb").evaluate(source)
      assert_equal expected, config.public_send(key), source
    end
  end

  def test_a_bad_value_is_refused_by_the_server_as_its_own_are
    {
      %w[--profile-sample 0] => '--profile-sample must be a positive integer (got "0")',
      %w[--profile-path x] => '--profile-path must be a path starting with / (got "x")',
      %w[--n-plus-one-threshold 0] => '--n-plus-one-threshold must be a positive integer (got "0")',
    }.each do |argv, message|
      error = assert_raises(Heron::ConfigError) { parse(*argv, "config.ru") }
      assert_equal message, error.message
    end
    {
      'profile_path "x"' => 'heron.rb:1: profile_path must be a path starting with / (got "x")',
      'profile_token ""' => 'heron.rb:1: profile_token must be a non-empty string (got "")',
    }.each do |source, message|
      error = assert_raises(Heron::ConfigError) { Heron::Config::DSL.new(Heron::Configuration.new, "heron.rb").evaluate(source) }
      assert_equal message, error.message
    end
  end

  def test_profiling_is_on_in_development_with_the_profiler_installed
    assert Heron::Configuration.new(environment: "development").profile?
    refute Heron::Configuration.new(environment: "production").profile?
  end

  # Heron names this gem when one of these is used without it: its list must stay this gem's.
  def test_heron_knows_the_names_to_point_at_this_gem
    plugin = Heron::Config::Settings::PLUGINS.find { |entry| entry[:gem] == "heron-profiler" }
    assert_equal Heron::Profiler::Settings::ALL.map { |setting| setting[:name] }, plugin[:names]
    assert_equal "", Heron::Config::Settings.missing_hint(:profile_path), "installed: nothing to add"
  end

  def test_help_lists_the_profilers_flags
    help = Heron::Config::CLI.new([]).help
    Heron::Profiler::Settings::ALL.each { |setting| setting[:flags]&.each { |flag| assert_includes help, flag } }
  end
end
