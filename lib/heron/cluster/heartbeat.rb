# frozen_string_literal: true

require_relative "../clock"

module Heron
  class Cluster
    # Runs in every reactor of a worker (see Server::ReactorThread): each tick of the event loop
    # records itself, and the worker tells the master it is alive only while every one of its
    # reactors ticked recently. A fiber stuck in a call that never yields stops its reactor's
    # ticks, so the master hears nothing and kills the worker after `worker_timeout`.
    class Heartbeat
      INTERVAL = 1.0

      # @param channel [Channel] where beats go.
      # @param timeout [Float] worker_timeout; a reactor silent for a third of it holds the beats back.
      def initialize(channel, timeout)
        @channel = channel
        @stale_after = [timeout / 3.0, INTERVAL * 2].max
        @ticks = {}
        @lock = Mutex.new
      end

      # @return [#call, nil] called once (with the reactor) when a reactor's accept loop died:
      #   the worker then drains and exits, and the master starts a new one.
      attr_accessor :on_accept_failure

      # Beats every {INTERVAL} until the calling task is stopped, or until the reactor no longer
      # accepts (an accept loop ended with an exception): then {#on_accept_failure} is called.
      # @param reactor [#connection_count, #accepting?] the reactor whose loop runs the task.
      # @return [void]
      def run(reactor)
        while reactor.accepting?
          beat(reactor)
          sleep(INTERVAL)
        end
        @on_accept_failure&.call(reactor)
      end

      # Records one tick of `reactor` and sends a beat if every reactor is fresh.
      # @param reactor [#connection_count, #parked_count, #served]
      # @return [void]
      def beat(reactor)
        now = Clock.now
        fresh, reactors = @lock.synchronize do
          @ticks[reactor] = now
          [@ticks.each_value.all? { |tick| now - tick < @stale_after }, @ticks.keys]
        end
        @channel.beat(reactors.sum(&:connection_count), reactors.sum(&:parked_count), reactors.sum(&:served)) if fresh
      end
    end
  end
end
