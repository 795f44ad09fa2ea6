# frozen_string_literal: true

require "rails/railtie"
require_relative "serving"
require_relative "restart"
require_relative "pool_wait/railtie"
require_relative "railtie/json_log" # Rails' lines as JSON under log_format :json (its own initializers)

module Heron
  # Rails integration, loaded only when Rails is (lib/heron.rb, or {Serving.start!} for a Rails
  # app started by `heron` or `rackup`). It does nothing unless Heron serves the app, so an app
  # that keeps Heron in its Gemfile but runs Puma, a console or a rake task is untouched. When
  # Heron serves it:
  # - ActiveSupport's per-request state (CurrentAttributes, ActiveRecord's connection leases, the
  #   executor) is kept per fiber, not per thread: every connection is a fiber, and with the
  #   default `:thread` level concurrent requests on one reactor thread share it;
  # - requests wait their turn for a database connection until their own deadline rather than
  #   failing after `checkout_timeout` ({PoolWait}, pool_wait/railtie.rb), and a pool smaller
  #   than the requests one process serves at once (`max_connections`) is noted at boot;
  # - in development, touching `tmp/restart.txt` (`bin/rails restart`) restarts the server.
  # See docs/rails.md.
  class Railtie < ::Rails::Railtie
    # How often tmp/restart.txt is looked at, in seconds.
    RESTART_POLL = 1

    initializer "heron.isolation_level", after: :load_config_initializers do |app|
      Railtie.isolate_fibers(app.config) if Serving.active?
    end

    config.after_initialize do |app|
      next unless Serving.active?
      Serving.on_config { |config| Railtie.check_pool(config.max_connections, config.pool_timeout) }
      Railtie.watch_restart(app.root.join("tmp/restart.txt").to_s) if ::Rails.env.development?
    end

    class << self
      # Sets ActiveSupport's isolation level to :fiber, saying so when the app chose another.
      # @param config [Rails::Application::Configuration]
      # @return [void]
      def isolate_fibers(config)
        level = config.active_support.isolation_level
        warn_once("config.active_support.isolation_level is #{level.inspect}; Heron sets :fiber (docs/rails.md)") if level && level != :fiber
        config.active_support.isolation_level = :fiber
        ::ActiveSupport::IsolatedExecutionState.isolation_level = :fiber
      end

      # Warns for each database whose pool is smaller than the requests a process serves at once:
      # past `pool` requests, those using the database wait their turn (see {PoolWait}).
      # @param concurrency [Integer] requests one process can serve at once.
      # @param pool_timeout [Float] seconds a request may wait for a connection; 0: checkout_timeout.
      # @return [Array<String>] the warnings given.
      def check_pool(concurrency, pool_timeout)
        return [] unless defined?(::ActiveRecord::Base)
        ::ActiveRecord::Base.configurations.configs_for(env_name: ::Rails.env).filter_map do |db|
          next if db.pool >= concurrency
          bound = pool_timeout.positive? ? "pool_timeout (#{format("%g", pool_timeout)} s) after it arrived" : "checkout_timeout (#{format("%g", db.checkout_timeout)} s)"
          warn_once("database #{db.name.inspect} has a pool of #{db.pool} connections, but this process serves up to " \
                    "#{concurrency} requests at once (max_connections): past #{db.pool}, a request that uses the " \
                    "database waits its turn for a connection, up to #{bound}. Raise `pool` in " \
                    "config/database.yml if requests wait long (docs/rails.md)")
        end
      end

      # Watches a file in a thread of its own and asks for a restart when its mtime changes
      # (or it appears).
      # @param path [String]
      # @return [Thread]
      def watch_restart(path)
        initial = mtime(path)
        Thread.new do
          Thread.current.name = "heron restart.txt"
          sleep RESTART_POLL while mtime(path) == initial
          Restart.request("#{path} changed")
        end
      end

      private

      def mtime(path)
        File.mtime(path)
      rescue SystemCallError
        nil
      end

      def warn_once(text)
        message = "heron: warning: #{text}"
        $stderr.puts(message)
        message
      end
    end
  end
end
