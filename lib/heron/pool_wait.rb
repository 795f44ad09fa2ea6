# frozen_string_literal: true

module Heron
  # Requests wait their turn for an ActiveRecord connection until their own deadline. Under Heron
  # a process serves many more requests at once than Rails' default pool has connections (5);
  # ActiveRecord queues the others fairly (first come, first served, each in its fiber), but gives
  # up after `checkout_timeout` (5 s) with ActiveRecord::ConnectionTimeoutError, which a burst of
  # database-bound requests reaches long before the pool is at fault. Heron makes each request
  # wait for a connection until `pool_timeout` seconds after it arrived (or `checkout_timeout`
  # after it asked, whichever is later), and past that raises {PoolWait::DeadlineError}, which
  # Rails answers with 503. Requests that never touch the database are not held back at all.
  # Loaded only under Rails with ActiveRecord; wired by {PoolWait::Railtie}. See docs/rails.md.
  module PoolWait
    KEY = :heron_pool_deadline
    private_constant :KEY

    class << self
      # @return [Float, nil] seconds a request may wait for a connection, counted from its
      #   arrival (`pool_timeout`); nil leaves ActiveRecord's checkout_timeout alone.
      attr_accessor :timeout

      # @return [Float, nil] the monotonic time until which the current fiber's request may wait
      #   for a database connection, or nil outside a request (or with `pool_timeout 0`).
      def deadline
        Thread.current[KEY] # fiber-local, as every Thread#[] value
      end

      # Sets the current fiber's deadline for the request it serves. Not restored afterwards:
      # a streaming body's queries keep the request's deadline, and the next request on the
      # same fiber sets its own.
      # @param arrival [Float] monotonic time the request arrived.
      # @return [void]
      def start(arrival)
        Thread.current[KEY] = timeout&.positive? ? arrival + timeout : nil
      end
    end
  end
end
