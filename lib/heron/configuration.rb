# frozen_string_literal: true

require "etc"
require_relative "config_error"
require_relative "config/types"
require_relative "config/settings"

module Heron
  # Every setting Heron understands, with its default. The CLI and the config-file DSL both write
  # into one of these; the server, cluster and connection read from it.
  class Configuration
    # Each setting's default (see {Config::Settings}, where every setting is declared once).
    DEFAULTS = Config::Settings.defaults

    # How {#set} checks and coerces each setting: a {Config::Types} method, and its extra arguments.
    TYPES = Config::Settings.types

    # Older names that still work: the setting they set.
    ALIASES = { metrics_bind: :control_bind }.freeze

    # Where the environment name comes from when `environment` is not set, first match wins.
    # Puma reads APP_ENV, RACK_ENV, RAILS_ENV; Heron puts RAILS_ENV before RACK_ENV because Rails
    # does, so Heron and the Rails app it serves can never disagree about being in production.
    ENVIRONMENT_VARIABLES = %w[APP_ENV RAILS_ENV RACK_ENV].freeze

    DEFAULTS.each_key { |key| attr_accessor key }

    # @param overrides [Hash] settings to apply on top of {DEFAULTS}; each is checked by {#set}.
    # @raise [ConfigError] for an unknown setting or an invalid value.
    def initialize(**overrides)
      DEFAULTS.each { |key, value| instance_variable_set(:"@#{key}", dup_default(value)) }
      @explicit = []
      overrides.each { |key, value| set(key, value) }
    end

    # Checks, coerces and sets one setting by name ("4" becomes 4, "json" becomes :json).
    # @param key [Symbol] a key of {DEFAULTS}.
    # @param value [Object] the new value.
    # @param label [String] what to call the setting in an error message (e.g. "--workers").
    # @return [Object] the coerced value.
    # @raise [ConfigError] for an unknown key or an invalid value.
    def set(key, value, label: key.to_s)
      key = ALIASES.fetch(key, key)
      type, *arguments = TYPES.fetch(key) { raise ConfigError, "unknown setting #{key.inspect}#{Config::Settings.missing_hint(key)}" }
      coerced = public_send(:"#{key}=", Config::Types.public_send(type, value, label, *arguments))
      @explicit |= [key]
      coerced
    end

    # @param key [Symbol] a key of {DEFAULTS}.
    # @return [Boolean] whether {#set} has set it (a config-file directive or a constructor
    #   argument), as opposed to its default.
    def explicit?(key)
      @explicit.include?(key)
    end

    # What hosting platforms set, used only where nothing more specific did: `WEB_CONCURRENCY`
    # for `workers` (a number, or "auto" for one per CPU) and `PORT` for `port` (when no bind is
    # given either). Called by the `heron` command once the config file and flags are in.
    # @param env [Hash{String => String}] the process environment.
    # @param given [Array<Symbol>] settings given some other way (command-line flags).
    # @return [self]
    # @raise [ConfigError] naming the variable when its value is invalid.
    def apply_platform_env(env = ENV, given: [])
      workers = present(env["WEB_CONCURRENCY"])
      port = present(env["PORT"])
      workers = Etc.nprocessors if workers == "auto"
      set(:workers, workers, label: "WEB_CONCURRENCY") if workers && !given?(:workers, given)
      set(:port, port, label: "PORT") if port && binds.empty? && !given?(:port, given)
      self
    end

    # @return [String, nil] the control address (old name of {#control_bind}).
    def metrics_bind = control_bind

    # @param uri [String, nil] sets {#control_bind} (old name).
    def metrics_bind=(uri)
      self.control_bind = uri
    end

    # @return [Hash{Symbol => Object}] every setting and its current value.
    def to_h
      DEFAULTS.keys.to_h { |key| [key, public_send(key)] }
    end

    # @return [Array<String>] bind URIs: the explicit binds, or one built from host and port.
    def bind_uris
      return binds unless binds.empty?
      ["tcp://#{host.include?(':') ? "[#{host}]" : host}:#{port}"]
    end

    # @return [String] the environment name: the `environment` setting (`-e`), else the first of
    #   {ENVIRONMENT_VARIABLES} that is set and not empty, else "development".
    def environment_name
      environment || ENVIRONMENT_VARIABLES.lazy.filter_map { |name| present(ENV[name]) }.first || "development"
    end

    # @return [Boolean] whether rack.input must support #rewind: as set, else when the app runs
    #   under Rack 2 (whose SPEC requires it; Rack 3 dropped it).
    def rewindable_input?
      return rewindable_input unless rewindable_input.nil?
      @rack2 = rack2? if @rack2.nil? # asked once per request: the answer cannot change
      @rack2
    end

    # @return [Boolean] whether per-request profiling is on: as set, else in development when the
    #   heron-profiler gem can be loaded (it is in the app's bundle, or installed).
    def profile?
      profile.nil? ? environment_name == "development" && profiler_installed? : profile
    end

    # @return [Boolean] whether the Prometheus metrics endpoint runs: as set, else as `profile`
    #   is set, else in development (whether or not heron-profiler is installed: the metrics are
    #   the server's own).
    def metrics?
      return metrics unless metrics.nil?
      profile.nil? ? environment_name == "development" : profile
    end

    private

    def profiler_installed?
      @profiler_installed = !Gem.find_files("heron/profiler.rb").empty? if @profiler_installed.nil?
      @profiler_installed
    end

    def rack2?
      require "rack/version"
      Rack.release < "3"
    end

    def present(value)
      value = value&.strip
      value.nil? || value.empty? ? nil : value
    end

    def given?(key, given)
      explicit?(key) || given.include?(key)
    end

    def dup_default(value)
      value.is_a?(Array) || value.is_a?(Hash) ? value.dup : value
    end
  end
end
