# frozen_string_literal: true

require "test_helper"
require "heron/config/cli"
require "heron/config/dsl"

# The settings table is the one place a setting is declared: Configuration, the CLI, the DSL and
# the docs are made from it.
class HeronConfigSettingsTest < Minitest::Test
  Settings = Heron::Config::Settings
  DOCS = File.expand_path("../../../docs/configuration.md", __dir__)
  # Where a plugin's settings are listed: its README, beside its code.
  PLUGIN_DOCS = { "heron-profiler" => File.expand_path("../../../heron-profiler/README.md", __dir__) }.freeze

  def test_the_docs_tables_are_current
    docs = File.read(DOCS)
    assert_equal Settings.update_docs(docs), docs, "docs/configuration.md is out of date: run `bundle exec rake docs:settings`"
    (Settings::PLUGINS.map { |plugin| plugin[:gem] } - Settings.missing_plugins).each do |gem|
      readme = File.read(PLUGIN_DOCS.fetch(gem))
      assert_equal Settings.update_docs(readme), readme, "#{gem}'s README is out of date: run `bundle exec rake docs:settings`"
    end
  end

  def test_every_group_has_its_table_in_the_docs
    Settings.all.group_by(&:owner).each do |owner, settings|
      docs = File.read(owner ? PLUGIN_DOCS.fetch(owner) : DOCS)
      settings.map(&:group).uniq.each { |group| assert_includes docs, format(Settings::DOC_BEGIN, group) }
    end
  end

  def test_configuration_cli_and_dsl_come_from_the_table
    names = Settings.all.map(&:name)
    assert_equal names, Heron::Configuration::DEFAULTS.keys
    assert_equal names, Heron::Configuration::TYPES.keys
    assert_equal Settings.flags, Heron::Config::CLI::SETTING_FLAGS.first(Settings.flags.size)
    Settings.directives.each do |setting|
      assert_includes Heron::Config::DSL.public_instance_methods, setting.directive_name.to_sym
    end
  end

  def test_a_setting_added_to_the_table_appears_everywhere
    setting = Heron::Config::Setting.new(name: :demo, default: 3, type: [:positive_integer], group: "Listening",
                                         directive: :value, usage: "demo COUNT", shown: "`3`", doc: "a demo",
                                         flags: ["--demo COUNT"], help: "a demo")
    assert_equal "a demo (default 3)", setting.help_line
    assert_equal [["demo COUNT", "`--demo COUNT`", "`3`", "a demo"]], setting.rows
    assert_equal "demo", setting.directive_name
  end

  def test_the_parser_limits_come_from_the_table
    assert_equal Settings.defaults.slice(*Heron::HTTPParser::LIMITS.keys), Heron::HTTPParser::LIMITS
    error = assert_raises(ArgumentError) { Heron::HTTPParser.allocate.send(:initialize) }
    assert_match(/missing keyword: max_target_bytes/, error.message)
  end

  def test_directives_made_from_the_table_check_their_values
    config = Heron::Configuration.new
    dsl = Heron::Config::DSL.new(config)
    dsl.workers("3")
    dsl.forwarded_proto
    dsl.trusted_proxies("10.0.0.0/8", "127.0.0.1")
    dsl.continue(:eager)
    assert_equal [3, true, :eager], [config.workers, config.forwarded_proto, config.continue_mode]
    assert_equal 2, config.trusted_proxies.size
    assert_raises(Heron::ConfigError) { dsl.threads(0) }
  end
end
