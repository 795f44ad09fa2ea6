# frozen_string_literal: true

module Heron
  # Whether this process is a Heron server, and its configuration once known. Integrations that
  # only make sense under Heron ({Heron::Railtie}) ask {.active?}; the rackup handler calls
  # {.start!} when it is loaded (before rackup or Rails builds the app), the {Launcher} with the
  # configuration it runs.
  module Serving
    @active = false
    @config = nil
    @hooks = []

    class << self
      # @return [Boolean]
      def active?
        @active
      end

      # Marks this process as a Heron server. In a Rails app started by `heron` or `rackup`
      # (Rails not loaded yet), it loads Rails and the Railtie first, as `rails server` would, so
      # that the Railtie takes part in the app's boot.
      # @param config [Configuration, nil] the configuration, once known.
      # @return [void]
      def start!(config = nil)
        @active = true
        load_railtie
        return unless config
        @config = config
        @hooks.shift.call(config) until @hooks.empty?
      end

      # Runs a block with the server's configuration: now when it is known, else once {.start!}
      # gets it.
      # @yieldparam config [Configuration]
      # @return [void]
      def on_config(&hook)
        @config ? hook.call(@config) : @hooks << hook
      end

      private

      def load_railtie
        return if defined?(::Heron::Railtie)
        return unless defined?(::Rails::Railtie) || (File.file?("config/application.rb") && rails_loadable?)
        require_relative "railtie"
      end

      def rails_loadable?
        require "rails"
        true
      rescue LoadError
        false
      end
    end
  end
end
