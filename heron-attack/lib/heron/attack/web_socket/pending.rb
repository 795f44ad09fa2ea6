# frozen_string_literal: true

require "async/condition"

module Heron
  module Attack
    module WebSocket
      # The messages one connection has sent and not yet had echoed, oldest first (an echo server
      # answers in order), with their due and send times; and whether the connection has failed.
      class Pending
        def initialize
          @queue = []
          @changed = Async::Condition.new
          @failed = false
        end

        # @param due [Float] @param sent [Float] @return [void]
        def push(due, sent)
          @queue << [due, sent]
        end

        # Takes an echo for the oldest message: yields its due and send times, then removes it
        # (so a fiber draining the queue sees it gone only once it has been recorded).
        # @yieldparam due [Float] @yieldparam sent [Float]
        # @return [Boolean] false when no message was waiting.
        def answer
          due, sent = @queue.first
          return false unless due
          yield due, sent
          @queue.shift
          @changed.signal
          true
        end

        # @return [Boolean] whether the connection failed (it sends no more).
        def failed?
          @failed
        end

        # @return [Boolean]
        def empty?
          @queue.empty?
        end

        # Fails every message still waiting (recorded as errors) and the connection; a connection
        # that fails with nothing waiting counts as one error itself.
        # @param recorder [Recorder] @param error [Exception] @param time [Float] now.
        # @return [void]
        def fail!(recorder, error, time)
          recorder.error!(time, time, error) if @queue.empty? && !@failed
          @failed = true
          @queue.each { |due, _| recorder.error!(due, time, error) }
          @queue.clear
          @changed.signal
        end

        # Waits until every message is echoed, or fails those left once the oldest has waited
        # `timeout` seconds since it was sent.
        # @param recorder [Recorder] @param timeout [Numeric] @param clock [#call] the time now.
        # @return [void]
        def drain(recorder, timeout, clock)
          until @queue.empty?
            left = @queue.first[1] + timeout - clock.call
            next fail!(recorder, Async::TimeoutError.new("no echo within #{timeout}s"), clock.call) unless left.positive?
            wait(left)
          end
        end

        private

        def wait(seconds)
          Async::Task.current.with_timeout(seconds) { @changed.wait }
        rescue Async::TimeoutError
          nil
        end
      end
    end
  end
end
