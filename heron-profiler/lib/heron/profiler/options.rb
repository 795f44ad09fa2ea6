# frozen_string_literal: true

require "logger"
require "heron/configuration"
require "heron/log/logger"

module Heron
  module Profiler
    # What the profiler reads ({Middleware}, the dashboard, the SQL recorder): its own settings
    # (those Heron's table marks `owner: :profiler`, declared once in lib/heron/config/settings.rb
    # with their defaults, types and docs) and the three of the server's it needs (environment,
    # trusted proxies, workers), plus where N+1 warnings go.
    #
    # Under Heron they come from its configuration ({.from_configuration}, the adapter); under any
    # other Rack server from keywords, checked like Heron's own:
    #
    #   run Heron::Profiler.wrap(app, profile_path: "/_profiler", n_plus_one_threshold: 3)
    class Options
      # The server's settings the profiler reads without owning them.
      SHARED = %i[trusted_proxies workers].freeze
      NAMES = (Config::Settings.owned_by(:profiler) + SHARED).freeze

      attr_reader(*NAMES)
      # @return [String] the environment's name ("development" shows headers to everyone).
      attr_reader :environment_name
      # @return [#warn] where N+1 warnings go.
      attr_reader :logger

      # The adapter from the server's configuration.
      # @param config [Heron::Configuration]
      # @return [Options]
      def self.from_configuration(config)
        new(config.environment_name, NAMES.to_h { |name| [name, config.public_send(name)] }, Log::Logger.new(config))
      end

      # @param options [Options, Heron::Configuration, Hash] options as they are, a server's
      #   configuration, or keywords (any of {NAMES}, `environment:`, `logger:`).
      # @return [Options]
      # @raise [Heron::ConfigError] for an unknown option or an invalid value.
      def self.for(options)
        return options if options.is_a?(Options)
        return from_configuration(options) if options.is_a?(Configuration)
        keywords(**options)
      end

      # @return [Options] from keywords; the rest default as in Heron's settings table.
      def self.keywords(environment: nil, logger: ::Logger.new($stderr), **values)
        unknown = values.keys - NAMES
        raise ConfigError, "unknown profiler option #{unknown.first.inspect} (known: #{NAMES.join(', ')})" unless unknown.empty?
        config = Configuration.new(environment: environment, **values)
        new(config.environment_name, NAMES.to_h { |name| [name, config.public_send(name)] }, logger)
      end

      # @param environment_name [String]
      # @param values [Hash{Symbol => Object}] a value for each of {NAMES}.
      # @param logger [#warn]
      def initialize(environment_name, values, logger)
        @environment_name = environment_name
        NAMES.each { |name| instance_variable_set(:"@#{name}", values.fetch(name)) }
        @logger = logger
      end
    end
  end
end
