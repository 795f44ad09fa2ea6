# frozen_string_literal: true

require "optparse"
require_relative "../version"
require_relative "../configuration"
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
      USAGE = "Usage: heron [options] [config.ru]\n       heron attack [options] URL  (heron attack --help)\n" \
              "       heron ctl stats|backtraces|restart|phased-restart|reopen-logs|stop|halt  (heron ctl --help)"

      # Flags that set one setting: [setting, switches, description]. Every one has a DSL directive.
      SETTING_FLAGS = [
        [:port, ["-p", "--port PORT"], "TCP port when no --bind is given (default 9292)"],
        [:host, ["-o", "--host HOST"], "address when no --bind is given (default 0.0.0.0)"],
        [:workers, ["-w", "--workers COUNT"], "worker processes; 0 runs one process (default 0)"],
        [:threads, ["-t", "--threads COUNT"], "reactor threads per process (default 1)"],
        [:environment, ["-e", "--environment NAME"], "default APP_ENV, RAILS_ENV, RACK_ENV, development"],
        [:preload, ["--[no-]preload"], "load the app before forking workers (default off)"],
        [:max_connections, ["--max-connections COUNT"], "open connections per process (default 4096)"],
        [:log_format, ["--log-format FORMAT"], "common or json (default common)"],
        [:quiet, ["-q", "--[no-]quiet"], "no access log (default off)"],
        [:log_requests, ["--[no-]log-requests"], "access log (default on)"],
        [:continue_mode, ["--continue MODE"], "100-continue: lazy or eager (default lazy)"],
        [:profile, ["--[no-]profile"], "per-request profiler (default on in development)"],
        [:profile_path, ["--profile-path PATH"], "profiler pages' path (default /__heron)"],
        [:profile_sample, ["--profile-sample N"], "profile one request in N (default 1: all)"],
        [:metrics, ["--[no-]metrics"], "metrics endpoint (default on when profiling)"],
        [:control_bind, ["--control-bind URI"], "health/stats/ctl/metrics listener (tcp://127.0.0.1:9393)"],
        [:control_bind, ["--metrics-bind URI"], "old name of --control-bind"],
        [:control_token, ["--control-token TOKEN"], "token for /stats, /backtraces, ctl (default none)"],
        [:tag, ["--tag NAME"], "process titles' tag (default: the directory's name)"],
        [:max_in_flight, ["--max-in-flight COUNT"], "503 past this many requests in the app (off)"],
        [:max_queue_time, ["--max-queue-time SECONDS"], "503 for requests that waited longer (off)"],
        [:trusted_proxies, ["--trusted-proxies CIDRS"], "comma-separated proxies to believe (none)"],
        [:n_plus_one_threshold, ["--n-plus-one-threshold COUNT"], "repeated-query warning (default 2)"],
        [:shutdown_timeout, ["--shutdown-timeout SECONDS"], "graceful stop deadline (default 30)"],
        [:worker_timeout, ["--worker-timeout SECONDS"], "kill a worker whose loop is stuck (default 60)"],
        [:worker_boot_timeout, ["--worker-boot-timeout SECONDS"], "kill a worker still booting (default 60)"],
        [:worker_max_memory, ["--worker-max-memory BYTES"], "replace a worker above this RSS (default off)"],
        [:pidfile, ["--pidfile PATH"], "write the master's pid there (default none)"],
        [:log_file, ["--log-file PATH"], "append both logs there, reopened on SIGHUP (default stdout/stderr)"],
        [:first_byte_timeout, ["--first-byte-timeout SECONDS"], "connect to first byte (default 10)"],
        [:header_timeout, ["--header-timeout SECONDS"], "first byte to end of headers (default 10)"],
        [:keepalive_timeout, ["--keepalive-timeout SECONDS"], "idle keep-alive wait (default 20)"],
        [:body_timeout, ["--body-timeout SECONDS"], "wait for more body bytes (default 30)"],
        [:min_body_rate, ["--min-body-rate BYTES"], "bytes/s a body must average, 0 = off (1024)"],
        [:body_rate_grace, ["--body-rate-grace SECONDS"], "waiting allowed before the rate (10)"],
        [:drain_delay, ["--drain-delay SECONDS"], "keep accepting after TERM (default 0)"],
        [:write_timeout, ["--write-timeout SECONDS"], "wait for the client to read (default 30)"],
        [:max_body_size, ["--max-body-size BYTES"], "413 above this, or unlimited (default 100 MiB)"],
        [:rewindable_input, ["--[no-]rewindable-input"], "rack.input can rewind (default: on with Rack 2)"],
        [:body_spool_threshold, ["--body-spool-threshold BYTES"], "rewindable body to a Tempfile (131072)"],
        [:max_target_bytes, ["--max-target-bytes BYTES"], "414 above this (default 8192)"],
        [:max_header_bytes, ["--max-header-bytes BYTES"], "431 above this (default 65536)"],
        [:max_header_fields, ["--max-header-fields COUNT"], "431 above this (default 100)"],
        [:forwarded_proto, ["--[no-]forwarded-proto"], "trust X-Forwarded-Proto (default off)"],
        [:http2, ["--[no-]http2"], "serve HTTP/2: TLS with ALPN h2, cleartext with prior knowledge (default on)"],
        [:after_reply_concurrency, ["--after-reply-concurrency COUNT"], "after-reply callbacks (64)"],
      ].freeze

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
        raise ConfigError, "#{e.message} (see heron --help)"
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
      end
    end
  end
end
