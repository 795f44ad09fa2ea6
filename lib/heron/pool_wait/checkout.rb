# frozen_string_literal: true

require_relative "../clock"

module Heron
  module PoolWait
    # Prepended to ActiveRecord::ConnectionAdapters::ConnectionPool. `checkout(timeout)` is the
    # pool's public way in (`connection`, `with_connection` and `lease_connection` all take a
    # connection through it); the wait itself stays ActiveRecord's: its queue hands a returned
    # connection to the longest waiter, and waiting parks only the request's fiber. Heron changes
    # only how long a request inside its deadline waits.
    module Checkout
      # @param checkout_timeout [Float] ActiveRecord's own bound, kept as the least wait.
      # @return [ActiveRecord::ConnectionAdapters::AbstractAdapter]
      # @raise [DeadlineError] when the request's deadline passes first.
      def checkout(checkout_timeout = @checkout_timeout)
        deadline = PoolWait.deadline
        return super unless deadline
        asked = Clock.now
        wait = [deadline - asked, checkout_timeout].max
        begin
          super(wait)
        rescue ::ActiveRecord::ConnectionTimeoutError => e
          raise if e.is_a?(::ActiveRecord::ExclusiveConnectionTimeoutError)
          raise DeadlineError.for(self, Clock.now - asked)
        end
      end
    end
  end
end
