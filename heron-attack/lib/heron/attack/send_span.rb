# frozen_string_literal: true

module Heron
  module Attack
    # When a run's first and last requests were sent and when the last one finished (monotonic
    # seconds), from which the report's attack, wait and total times come. Part of a {Recorder};
    # merges by taking the earliest and latest.
    class SendSpan
      # @return [Float, nil] when the first request was sent.
      attr_reader :first_sent
      # @return [Float, nil] when the last request was sent.
      attr_reader :last_sent
      # @return [Float, nil] when the last request finished (answered or failed).
      attr_reader :last_done

      # A request went out at `time`. @param time [Float] @return [void]
      def sent(time)
        @first_sent = time if @first_sent.nil? || time < @first_sent
        @last_sent = time if @last_sent.nil? || time > @last_sent
      end

      # A request finished at `time`. @param time [Float] @return [void]
      def done(time)
        @last_done = time if @last_done.nil? || time > @last_done
      end

      # Widens this span to cover another.
      # @param other [SendSpan]
      # @return [self]
      def merge!(other)
        @first_sent = [@first_sent, other.first_sent].compact.min
        @last_sent = [@last_sent, other.last_sent].compact.max
        @last_done = [@last_done, other.last_done].compact.max
        self
      end
    end
  end
end
