# frozen_string_literal: true

require "logger"
require_relative "settings"
require_relative "option_types"
require_relative "option_error"

module Heron
  module Profiler
    # What the profiler reads ({Middleware}, the dashboard, the SQL recorder): its own settings
    # (declared once in {Settings}, with their defaults, types and docs) and the two of the
    # server's it needs (trusted proxies, workers), plus the environment's name and where N+1
    # warnings go.
    #
    # Under any Rack server they come from keywords, checked by {OptionTypes}:
    #
    #   run Heron::Profiler.wrap(app, profile_path: "/_profiler", n_plus_one_threshold: 3)
    #
    # Under Heron from its configuration ({.from_configuration}, the adapter), where Heron's
    # settings table has taken in {Settings} and checked every value already.
    class Options
      # The server's settings the profiler reads without owning them, as {Settings} declares its
      # own: under another server they are options like the rest.
      SHARED = [{ name: :trusted_proxies, default: [], type: [:cidrs] },
                { name: :workers, default: 0, type: [:non_negative_integer] }].freeze
      DECLARED = (Settings::ALL + SHARED).to_h { |setting| [setting[:name], setting] }.freeze
      NAMES = DECLARED.keys.freeze

      attr_reader(*NAMES)
      # @return [String] the environment's name ("development" shows headers to everyone).
      attr_reader :environment_name
      # @return [#warn] where N+1 warnings go.
      attr_reader :logger

      # The adapter from a server's configuration (Heron::Configuration, or any object that
      # answers `environment_name` and each of {NAMES}).
      # @param config [#environment_name]
      # @param logger [#warn]
      # @return [Options]
      def self.from_configuration(config, logger = ::Logger.new($stderr))
        new(config.environment_name, NAMES.to_h { |name| [name, configured(config, name)] }, logger)
      end

      # A configuration whose table never took this gem's settings in (Heron loaded before the
      # gem was on the load path) cannot have set them: their defaults hold.
      def self.configured(config, name)
        config.respond_to?(name) ? config.public_send(name) : DECLARED[name][:default].dup
      end

      # @param options [Options, #environment_name, Hash] options as they are, a server's
      #   configuration, or keywords (any of {NAMES}, `environment:`, `logger:`).
      # @return [Options]
      # @raise [OptionError] for an unknown option or an invalid value.
      def self.for(options)
        return options if options.is_a?(Options)
        return from_configuration(options) if options.respond_to?(:environment_name)
        keywords(**options)
      end

      # @param environment [String, nil] nil: APP_ENV, RAILS_ENV or RACK_ENV, else "development".
      # @return [Options] from keywords; the rest default as {Settings} declares.
      # @raise [OptionError] for an unknown option or an invalid value.
      def self.keywords(environment: nil, logger: ::Logger.new($stderr), **values)
        unknown = values.keys - NAMES
        raise OptionError, "unknown profiler option #{unknown.first.inspect} (known: #{NAMES.join(', ')})" unless unknown.empty?
        new(environment || environment_from(ENV), NAMES.to_h { |name| [name, checked(name, values)] }, logger)
      end

      # @return [String] the environment as Rack servers name it.
      def self.environment_from(env)
        %w[APP_ENV RAILS_ENV RACK_ENV].map { |name| env[name].to_s.strip }.find { |value| !value.empty? } || "development"
      end

      # @return [Object] the option's value, checked, or its default.
      def self.checked(name, values)
        type, *arguments = DECLARED[name][:type]
        return DECLARED[name][:default].dup unless values.key?(name)
        OptionTypes.public_send(type, values[name], name.to_s, *arguments)
      end
      private_class_method :checked, :environment_from, :configured

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
