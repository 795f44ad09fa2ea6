# frozen_string_literal: true

require "rails/railtie"
require "active_support/isolated_execution_state"

module Heron
  class Railtie < ::Rails::Railtie
    # The first middleware of a Rails app Heron serves: keeps the request's id (Heron's
    # `heron.request_id`, which Rails' `request.request_id` also is) in ActiveSupport's
    # per-fiber state while the request runs, where {JSONLog} finds it for every line Rails
    # logs, "Started GET ..." included.
    class LogRequestId
      KEY = :heron_request_id

      # @param app [#call]
      def initialize(app)
        @app = app
      end

      # @param env [Hash]
      # @return [Array] the app's response.
      def call(env)
        outer = ActiveSupport::IsolatedExecutionState[KEY]
        ActiveSupport::IsolatedExecutionState[KEY] = env["heron.request_id"]
        @app.call(env)
      ensure
        ActiveSupport::IsolatedExecutionState[KEY] = outer
      end
    end
  end
end
