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

  def test_every_declaration_keeps_the_tables_rules
    assert_empty Settings.faults, "a `shown:` only where the default's display would not say it; one-line docs " \
                                  "of at most #{Settings::DOC_LIMIT} characters (explanations go in the docs' prose)"
  end

  def test_a_shown_that_repeats_the_default_and_a_long_doc_are_faults
    setting = Heron::Config::Setting.new(name: :demo, default: 30.0, type: [:duration], shown: "`30`", doc: "x" * 161)
    assert_equal ["`shown:` repeats the default", "doc is 161 characters, over 160"], setting.faults(160)
    assert_equal ["doc is not one line"], Heron::Config::Setting.new(name: :demo, default: nil, doc: "a\nb").faults(160)
    assert_equal "`65536` (64 KiB)", Heron::Config::Setting.new(default: 64 * 1024, usage: "demo BYTES").shown
  end

  # Settings of one family sit in one group of the docs: the logging ones under Logging, and so on.
  FAMILIES = { /\Alog|_io\z|\Aquiet\z/ => "Logging", /\Aworker_|\Aworkers\z/ => "Processes and concurrency",
               /\Acontrol_/ => "The control listener, health checks and `heron ctl`",
               /\Ahttp2/ => "Proxies and HTTP behaviour", /\A(max|discard|prebuffer)_body|\Abody_(spool|memory)|\Arewindable/ => "Request bodies" }.freeze

  def test_each_family_of_settings_sits_in_its_group
    FAMILIES.each do |pattern, group|
      Settings::ALL.select { |setting| setting.name.match?(pattern) }.each do |setting|
        assert_equal group, setting.group, "#{setting.name} belongs with the others of its family"
      end
    end
  end

  def test_each_setting_has_one_owner_and_the_owners_share_no_group
    plugins = Settings::PLUGINS.map { |plugin| plugin[:gem] }
    assert Settings::ALL.none?(&:owner), "the core's table declares only the core's settings"
    assert_empty Settings::ALL.map(&:name) & Settings::PLUGINS.flat_map { |plugin| plugin[:names] }
    Settings.all.select(&:owner).each do |setting|
      assert_includes plugins, setting.owner
      refute_includes Settings::ALL.map(&:group), setting.group, "#{setting.name} is listed under its gem's own heading"
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
