# frozen_string_literal: true

module Demo
  module Users
    # An in-process cache of rendered index bodies (step 4 of seed 004's walk), keyed by a
    # version that {#expire} bumps whenever users, roles or groups change: a warm hit runs no
    # query at all. Per process: each worker warms its own.
    class IndexCache
      LIMIT = 100

      def initialize
        @version = 1
        @entries = {}
        @lock = Mutex.new
      end

      # @param key [String] what the body depends on besides the data (the roles filter).
      # @yield renders the body on a miss.
      # @return [String] the cached or fresh body.
      def fetch(key)
        full = "users/v#{@version}/#{key}"
        cached = @lock.synchronize { @entries[full] }
        return cached if cached
        body = yield
        @lock.synchronize { @entries.clear if @entries.size >= LIMIT; @entries[full] = body }
      end

      # Forgets every cached body (the data changed).
      # @return [Integer] the new version.
      def expire
        @lock.synchronize do
          @entries.clear
          @version += 1
        end
      end
    end
  end
end
