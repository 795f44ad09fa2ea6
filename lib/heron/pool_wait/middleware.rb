# frozen_string_literal: true

require_relative "../clock"

module Heron
  module PoolWait
    # The first Rack middleware of a Rails app served by Heron: gives the request's fiber its
    # deadline for database connections, counted from when Heron began reading the request.
    class Middleware
      # @param app [#call] the rest of the Rails middleware stack.
      def initialize(app)
        @app = app
      end

      # @param env [Hash] the Rack env.
      # @return [Array] the app's response.
      def call(env)
        PoolWait.start(env["heron.request_start"] || Clock.now)
        @app.call(env)
      end
    end
  end
end
