# frozen_string_literal: true

require "rack"
require "rack/builder"

module Heron
  # Loads the Rack app named by the configuration: the `app` object, or the rackup file.
  module AppLoader
    # @param config [Configuration]
    # @return [#call] the app, wrapped by the profiler when profiling is on.
    # @raise [ConfigError] when the rackup file is missing.
    def self.load(config)
      app = config.app || parse(config.rackup)
      config.profile? ? profile(app, config) : app
    end

    # @return [#call] the app built from a rackup file (Rack 2's parse_file also returns the
    #   file's `#\` options, which Heron does not use).
    def self.parse(path)
      raise ConfigError, "rackup file #{path} not found" unless File.file?(path)
      app = Rack::Builder.parse_file(path)
      Rack.release < "3" ? app.first : app
    end

    PROFILER_MISSING = "profiling is on (`profile true` or --profile) but the heron-profiler gem is not " \
                       "installed: add `gem \"heron-profiler\"` to the Gemfile's development group (or " \
                       "`gem install heron-profiler`), or turn profiling off with --no-profile"

    # @return [#call] the app wrapped by the heron-profiler gem's middleware.
    # @raise [ConfigError] when profiling was asked for and heron-profiler is not installed.
    def self.profile(app, config)
      require "heron/profiler"
      require_relative "log/logger"
      Profiler.wrap(app, config, logger: Log::Logger.new(config))
    rescue LoadError => e
      raise unless e.path == "heron/profiler"
      raise ConfigError, PROFILER_MISSING
    end
    private_class_method :parse, :profile
  end
end
