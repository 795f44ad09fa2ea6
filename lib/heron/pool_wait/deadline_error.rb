# frozen_string_literal: true

module Heron
  module PoolWait
    # Raised when a request's deadline for a database connection (`pool_timeout` after its
    # arrival) passed while every connection of the pool was in use. A ConnectionTimeoutError, so
    # code that rescues ActiveRecord's own keeps working; Rails answers it with 503.
    class DeadlineError < ::ActiveRecord::ConnectionTimeoutError
      # @param pool [ActiveRecord::ConnectionAdapters::ConnectionPool]
      # @param waited [Float] seconds this checkout waited.
      # @return [DeadlineError]
      def self.for(pool, waited)
        stat = pool.stat
        new("heron: no connection of database #{pool.db_config.name.inspect} came free within this request's " \
            "deadline (pool_timeout #{format("%g", PoolWait.timeout)} s from its arrival; waited " \
            "#{format('%.3f', waited)} s): all #{stat[:size]} connections of its pool were in use and " \
            "#{stat[:waiting]} other requests were waiting. Raise `pool` in config/database.yml (the " \
            "database must accept it), shorten what holds a connection, or raise pool_timeout " \
            "(docs/rails.md)", connection_pool: pool)
      end
    end
  end
end
