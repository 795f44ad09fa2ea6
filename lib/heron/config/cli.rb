# frozen_string_literal: true

require "optparse"
require_relative "../version"
require_relative "../configuration"
require_relative "settings"
require_relative "dsl"

module Heron
  module Config
    # The `heron` command: `heron [options] [config.ru]`, or `heron attack ...` for the load generator.
    #
    # Settings come from, lowest precedence first: {Heron::Configuration::DEFAULTS}, the
    # platform's WEB_CONCURRENCY and PORT (see {Heron::Configuration#apply_platform_env}), the
    # config file (`-C FILE`, or `config/heron.rb` when it exists), then the command-line flags.
    #
    # @example In a test: parse without starting anything.
    #   config = Heron::Config::CLI.new(%w[-w 2 app.ru]).parse
    class CLI
      DEFAULT_CONFIG_FILE = "config/heron.rb"
      EXIT_USAGE = 2
      # `heron attack` without the heron-attack gem: the shell's "command not found".
      EXIT_NOT_INSTALLED = 127
      ATTACK_MISSING = "heron attack: the load generator is the heron-attack gem, which is not installed.\n" \
                       "Install it with `gem install heron-attack` (or add `gem \"heron-attack\"` to the Gemfile " \
                       "and run `bundle install`), then run `heron attack` again.\n"
      USAGE = "Usage: heron [options] [config.ru]\n       heron attack [options] URL  (heron attack --help)\n" \
              "       heron ctl stats|backtraces|restart|phased-restart|reopen-logs|stop|halt  (heron ctl --help)"

      # Flags that set one setting: [setting, switches, description], from {Settings}, plus old
      # names that still work. Every one has a DSL directive.
      SETTING_FLAGS = (Settings.flags + [[:control_bind, ["--metrics-bind URI"], "old name of --control-bind"]]).freeze

      # @param argv [Array<String>] the command-line arguments.
      # @param stdout [IO] where --help and --version go.
      # @param stderr [IO] where the one-line error goes.
      # @param launcher [#call, nil] runs a configuration and returns the exit status
      #   (default: Heron::Launcher.new(config).run).
      # @param attack [#call, nil] runs `heron attack` with (argv, stdout:, stderr:) and returns the
      #   exit status (default: Heron::Attack::CLI).
      def initialize(argv, stdout: $stdout, stderr: $stderr, launcher: nil, attack: nil)
        @argv = argv.dup
        @stdout = stdout
        @stderr = stderr
        @launcher = launcher || method(:launch_server)
        @attack = attack || method(:launch_attack)
      end

      # Parses the arguments and runs the server (or `heron attack`, --help, --version).
      # @return [Integer] the exit status: 2 for a bad option or config value, else the server's.
      def run
        return @attack.call(@argv.drop(1), stdout: @stdout, stderr: @stderr) if @argv.first == "attack"
        return launch_ctl(@argv.drop(1)) if @argv.first == "ctl"
        config = parse
        config ? start(config) : 0
      rescue ConfigError => e
        @stderr.puts("heron: #{e.message}")
        EXIT_USAGE
      end

      # Builds the configuration from defaults, config file and flags, without side effects
      # other than printing --help or --version.
      # @return [Heron::Configuration, nil] nil when --help or --version was printed instead.
      # @raise [Heron::ConfigError] for an unknown flag, a bad value, or a missing file.
      def parse
        @overrides = {}
        @config_file = @printed = nil
        positional = parser.parse(@argv)
        @printed ? nil : build(positional)
      rescue OptionParser::ParseError => e
        raise ConfigError, "#{e.message} (see heron --help#{Settings.missing_hint(e.args.first.to_s)})"
      end

      # @return [String] the --help text.
      def help
        parser.help
      end

      private

      def parser
        OptionParser.new do |options|
          options.banner = USAGE
          options.separator("")
          add_listener_flags(options)
          SETTING_FLAGS.each { |key, switches, text| add_setting_flag(options, key, switches, text) }
          add_info_flags(options)
        end
      end

      def add_listener_flags(options)
        options.on("-b", "--bind URI", "listen on tcp://HOST:PORT or unix:///PATH (repeatable)") do |uri|
          (@overrides[:binds] ||= []) << Types.bind(uri, "--bind")
        end
        options.on("-C", "--config FILE", "config file (default #{DEFAULT_CONFIG_FILE} if present)") do |path|
          @config_file = path
        end
      end

      def add_setting_flag(options, key, switches, text)
        label = switches.last[/--(?:\[no-\])?[a-z0-9-]+/].sub("[no-]", "")
        options.on(*switches, text) { |value| @overrides[key] = scratch.set(key, value, label: label) }
      end

      def add_info_flags(options)
        options.on("-v", "--version", "print the version and exit") { print_once("heron #{VERSION}") }
        options.on("-h", "--help", "print this help and exit") { print_once(options.help) }
      end

      def print_once(text)
        @stdout.puts(text) unless @printed
        @printed = true
      end

      def scratch
        @scratch ||= Configuration.new
      end

      def build(positional)
        raise ConfigError, "unexpected argument #{positional[1].inspect} (see heron --help)" if positional.size > 1
        config = Configuration.new(**@overrides.slice(:environment))
        DSL.load(config, config_file) if config_file
        apply_flags(config, positional.first)
        config.apply_platform_env(ENV, given: @overrides.keys)
        check_app(config)
        config
      end

      def config_file
        @config_file || (DEFAULT_CONFIG_FILE if File.file?(DEFAULT_CONFIG_FILE))
      end

      # Flags win over the config file; any listener flag replaces the file's binds.
      def apply_flags(config, rackup)
        config.binds = [] if (@overrides.keys & %i[binds host port]).any?
        @overrides.each { |key, value| config.public_send(:"#{key}=", value) }
        config.set(:rackup, rackup) if rackup
      end

      def check_app(config)
        return if config.app || File.file?(config.rackup) && File.readable?(config.rackup)
        raise ConfigError, "rackup file #{config.rackup} not found (usage: heron [options] [config.ru])"
      end

      # The app sees the environment Heron chose under every name it may look for (RAILS_ENV only
      # when it is set, so a non-Rails app's environment is left alone).
      def start(config)
        name = config.environment_name
        ENV["RACK_ENV"] = ENV["APP_ENV"] = name
        ENV["RAILS_ENV"] = name if ENV.key?("RAILS_ENV")
        status = @launcher.call(config)
        status.is_a?(Integer) ? status : 0
      end

      def launch_server(config)
        require "heron/launcher"
        Heron::Launcher.new(config).run
      end

      def launch_ctl(argv)
        require "heron/control/cli"
        Heron::Control::CLI.new(argv, stdout: @stdout, stderr: @stderr).run
      end

      def launch_attack(argv, stdout:, stderr:)
        require "heron/attack"
        Heron::Attack::CLI.new(argv, stdout: stdout, stderr: stderr).run
      rescue LoadError => e
        raise unless e.path == "heron/attack"
        stderr.print(ATTACK_MISSING)
        EXIT_NOT_INSTALLED
      end
    end
  end
end
