# frozen_string_literal: true

require "async"
require_relative "recorder"
require_relative "clock"

module Heron
  module Attack
    # What the HTTP {Generator} and the {WebSocket::Generator} share: the stop flag, the frame of
    # a run (a {Recorder} that measures the run's CPU and garbage collections, the reactor, the
    # progress line twice a second). The including class defines a private `attack(task)` that
    # sends the plan and returns once every answer is in (or has failed).
    module PlanRunner
      include Clock

      # Stops sending: what is not yet due is dropped; what is in flight still finishes. Safe to
      # call from a signal handler.
      # @return [void]
      def stop
        @stopping = true
      end

      # Runs the whole plan (or until {#stop}) and waits for every answer.
      # @param start [Float, nil] the monotonic time the plan starts (its first request is due);
      #   now when nil.
      # @return [Recorder]
      def run(start = nil)
        @recorder = Recorder.new(start || now)
        @recorder.measure do
          Sync do |task|
            reporter = @progress && task.async { report_progress }
            attack(task)
            reporter&.stop
            @progress&.finish
          end
        end
        @recorder
      end

      private

      def report_progress
        loop do
          sleep(0.5)
          @progress.update(@recorder, now)
        end
      end
    end
  end
end
