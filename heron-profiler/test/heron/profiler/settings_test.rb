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

  def test_a_bad_value_is_refused_by_the_server_as_its_own_are
    error = assert_raises(Heron::ConfigError) { parse("--profile-sample", "0", "config.ru") }
    assert_equal "--profile-sample must be a positive integer (got \"0\")", error.message
    error = assert_raises(Heron::ConfigError) { Heron::Config::DSL.new(Heron::Configuration.new).profile_path("nope") }
    assert_match(/profile_path must be a path starting with \//, error.message)
  end

  def test_help_lists_the_profilers_flags
    help = Heron::Config::CLI.new([]).help
    Heron::Profiler::Settings::ALL.each { |setting| setting[:flags]&.each { |flag| assert_includes help, flag } }
  end
end
