# frozen_string_literal: true

require "rails/railtie"
require_relative "../serving"
require_relative "../pool_wait"
require_relative "../config/settings"
require_relative "middleware"

module Heron
  module PoolWait
    # Wires {PoolWait} into a Rails app that Heron serves and that uses ActiveRecord: the
    # deadline middleware first in the stack, {Checkout} onto ActiveRecord's connection pool once
    # ActiveRecord loads, `pool_timeout` from Heron's configuration, and 503 for {DeadlineError}.
    # Loaded with {Heron::Railtie}; does nothing for an app Heron does not serve.
    class Railtie < ::Rails::Railtie
      initializer "heron.pool_wait" do |app|
        next unless Serving.active? && defined?(::ActiveRecord::Railtie)
        app.config.middleware.insert_before(0, Middleware)
        ActiveSupport.on_load(:active_record) { Railtie.install }
      end

      config.after_initialize do
        next unless Serving.active? && defined?(::ActiveRecord::Railtie)
        Serving.on_config { |config| PoolWait.timeout = config.pool_timeout }
      end

      class << self
        # Prepends {Checkout} to ActiveRecord's pool and maps {DeadlineError} to 503.
        # @return [void]
        def install
          require_relative "checkout"
          require_relative "deadline_error"
          PoolWait.timeout ||= Config::Settings.defaults.fetch(:pool_timeout)
          pool = ::ActiveRecord::ConnectionAdapters::ConnectionPool
          pool.prepend(Checkout) unless pool <= Checkout
          ::ActionDispatch::ExceptionWrapper.rescue_responses[DeadlineError.name] = :service_unavailable
        end
      end
    end
  end
end
