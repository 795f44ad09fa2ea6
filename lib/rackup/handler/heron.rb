# frozen_string_literal: true

# Under Rack 2, lib/rack/handler/heron.rb defines the registry first (rackup 1.x has none).
require "rackup/handler" unless defined?(Rackup::Handler.register)
require "heron"
require "heron/config/dsl"
require "heron/restart"
require "heron/serving"

# Loaded by rackup or Rails only to serve with Heron, before they build the app.
Heron::Serving.start!

module Rackup
  module Handler
    # Lets `rackup -s heron` and `rails server -u heron` start Heron. Settings come from
    # config/heron.rb when it exists, then from rackup's options (:Host, :Port, :environment,
    # and Heron's own through `-O`, e.g. `rackup -s heron -O Workers=2 -O Threads=2`).
    module Heron
      DEFAULT_CONFIG_FILE = "config/heron.rb"
      # The environment rackup passes when neither `-E` nor RACK_ENV names one.
      RACKUP_DEFAULT_ENVIRONMENT = "development"

      # rackup's option names → Heron settings. Keys are compared case-insensitively. `pid`
      # (`rackup -P`, Rails' tmp/pids/server.pid) becomes Heron's `pidfile`, so that Heron keeps it
      # naming the serving master through restarts (rackup removes it whenever a process that
      # inherited its at_exit hook exits: a worker, or the master a hot restart replaced).
      OPTIONS = {
        host: :host, port: :port, environment: :environment, workers: :workers, threads: :threads,
        quiet: :quiet, log_requests: :log_requests, preload: :preload, max_connections: :max_connections, log_format: :log_format,
        shutdown_timeout: :shutdown_timeout, bind: :binds, pid: :pidfile, early_hints: :early_hints,
      }.freeze

      # Serves a Rack app until stopped. Exits with status 2 and one line on stderr for a bad value.
      # @param app [#call] the (already built) Rack app.
      # @param options [Hash] rackup's options; unknown ones are ignored.
      # @yieldparam launcher [::Heron::Launcher] the launcher, before it starts.
      # @return [Integer] the launcher's exit status.
      def self.run(app, **options)
        require "heron/launcher"
        ::Heron::Restart.prepare(options[:restart_cmd] || ::Heron::Restart::CommandLine.original) # Rails' or rackup's
        launcher = ::Heron::Launcher.new(configuration(app, options))
        yield launcher if block_given?
        launcher.run
      rescue ::Heron::ConfigError => e
        $stderr.puts("heron: #{e.message}") # not Kernel#warn: -W0 would silence it
        exit(2)
      end

      # Builds the configuration {.run} uses, without starting anything: rackup's defaults, then
      # config/heron.rb when present, then the options the user gave. Rails says which those are in
      # :user_supplied_options (so `rails server` keeps port 3000 unless the config file sets one);
      # with plain rackup every option counts as given.
      # @param app [#call] the Rack app.
      # @param options [Hash] rackup's options.
      # @return [::Heron::Configuration]
      # @raise [::Heron::ConfigError] for an invalid value.
      def self.configuration(app, options)
        defaults, given = split(options)
        config = ::Heron::Configuration.new(app: app)
        apply_all(config, defaults)
        ::Heron::Config::DSL.load(config, DEFAULT_CONFIG_FILE) if File.file?(DEFAULT_CONFIG_FILE)
        apply_all(config, given)
        config.set(:log_requests, false) if logs_requests?(app) && !config.explicit?(:log_requests)
        config
      end

      # Whether rackup already wrapped the app in Rack::CommonLogger (it does in its development
      # and deployment environments): Heron's own access log would then write every request a
      # second time, so it stays off unless asked for (`-O Log_requests`).
      # @param app [#call] the app rackup built.
      # @return [Boolean]
      def self.logs_requests?(app)
        20.times do
          return true if defined?(::Rack::CommonLogger) && app.is_a?(::Rack::CommonLogger)
          app = app.instance_variable_get(:@app) or return false
        end
        false
      end

      # @return [Hash{String => String}] the options `rackup -s heron -h` lists.
      def self.valid_options
        {
          "Host=HOST" => "Hostname to listen on (default: localhost)",
          "Port=PORT" => "Port to listen on (default: 9292)",
          "Bind=URI" => "Listen on tcp://HOST:PORT or unix:///PATH instead of Host and Port",
          "Workers=COUNT" => "Worker processes; 0 runs one process (default: 0)",
          "Threads=COUNT" => "Reactor threads per process (default: 1)",
          "Quiet" => "No access log",
          "Log_requests" => "Access log even when rackup's CommonLogger writes one",
          "Preload" => "Load the app before forking workers",
          "Max_connections=COUNT" => "Open connections per process (default: 4096)",
          "Log_format=FORMAT" => "common or json (default: common)",
          "Shutdown_timeout=SECONDS" => "Graceful stop deadline (default: 30)",
          "Early_hints" => "103 Early Hints through rack.early_hints (rails server --early-hints)",
        }
      end

      # @param options [Hash] rackup's options.
      # @return [Array(Hash, Hash)] the options that are only defaults, and the ones the user gave.
      def self.split(options)
        supplied = options[:user_supplied_options]
        return [{}, without_default_environment(options)] if supplied.nil?
        options.partition { |name, _| !supplied.include?(name) }.map(&:to_h)
      end

      # Plain rackup says neither which options were given nor where its environment came from:
      # it is `-E`, else RACK_ENV, else "development" (and rackup then sets RACK_ENV to it). Its
      # "development" is left out, so that Heron's own order decides (config/heron.rb, then
      # APP_ENV, RAILS_ENV, RACK_ENV): `RAILS_ENV=production rackup -s heron` runs Heron as
      # production. Any other name was chosen by the user (`-E` or RACK_ENV) and is kept.
      # @param options [Hash] rackup's options.
      # @return [Hash]
      def self.without_default_environment(options)
        options.reject { |name, value| name.to_s.casecmp?("environment") && value.to_s == RACKUP_DEFAULT_ENVIRONMENT }
      end

      # Applies the options Heron knows (an option that is nil, as Rails' `early_hints` when
      # `--early-hints` is not given, sets nothing); Host or Port replace the config file's binds.
      # @param config [::Heron::Configuration]
      # @param options [Hash] e.g. { Port: "9292", Workers: "2" }.
      # @return [void]
      def self.apply_all(config, options)
        known = options.filter_map do |name, value|
          key = OPTIONS[name.to_s.downcase.to_sym]
          [key, value, name] if key && !value.nil? # rackup's nil: not given
        end
        config.binds = [] if known.any? { |key, _| key == :host || key == :port }
        known.each { |key, value, name| config.set(key, value, label: name.to_s) }
      end
    end

    register :heron, Heron
  end
end
