# frozen_string_literal: true

module Heron
  class Cluster
    # The master's signals: each trap queues its signal and writes a byte to a self-pipe, so the
    # master's loop (asleep in IO.select on {#reader}) wakes and handles the queue in order, out
    # of the trap context.
    class Signals
      # The signals a master traps from its first fork on (URG too, once reforking is on).
      NAMES = %w[TERM INT QUIT USR1 USR2 HUP TTIN TTOU CHLD].freeze

      # @return [IO] the self-pipe's read end, for the loop's select.
      attr_reader :reader

      def initialize
        @queue = []
        @reader, @writer = IO.pipe
      end

      # Traps `names`: each one that arrives is queued (see {#push}).
      # @param names [Array<String>]
      # @return [void]
      def trap(names = NAMES)
        names.each { |name| Signal.trap(name) { push(name) } }
      end

      # Queues `name` and wakes the loop. Safe in a trap.
      # @param name [String]
      # @return [void]
      def push(name)
        @queue << name
        @writer.write_nonblock(".", exception: false)
      end

      # Empties the self-pipe, once select said it is readable.
      # @return [void]
      def drain
        @reader.read_nonblock(64, exception: false)
      end

      # @return [String, nil] the oldest queued signal, taken off the queue.
      def shift = @queue.shift

      # @return [Array<IO>] both pipe ends, which a forked worker closes.
      def ios = [@reader, @writer]
    end
  end
end
