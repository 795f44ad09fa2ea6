# frozen_string_literal: true

module Heron
  class Server
    # A reactor loop's self-pipe: how any thread, or a trap handler, tells the loop to stop (a
    # graceful stop, or at once), and how its drain tells it that it is over. Writing one byte is
    # safe in a trap; the loop waits for the bytes through the fiber scheduler.
    class WakePipe
      COMMANDS = { "g" => :graceful, "i" => :immediate, "d" => :drained }.freeze
      private_constant :COMMANDS

      def initialize
        @reader, @writer = IO.pipe
      end

      # Asks the loop to stop; safe from any thread and from a trap handler, and once the pipe is
      # closed (then nothing happens).
      # @param graceful [Boolean] drain in-flight requests first.
      # @return [void]
      def stop(graceful: true) = tell(graceful ? "g" : "i")

      # Tells the loop that its drain is over.
      # @return [void]
      def drained = tell("d")

      # Waits for the next command.
      # @return [Symbol, nil] :graceful, :immediate or :drained; nil when the wait woke with
      #   nothing to read.
      def next_command
        @reader.wait_readable
        COMMANDS[@reader.read_nonblock(1, exception: false)]
      end

      # Closes both ends (once the loop has ended).
      # @return [void]
      def close
        @reader.close
        @writer.close
      end

      private

      def tell(byte)
        @writer.write_nonblock(byte, exception: false)
      rescue IOError
        nil
      end
    end
  end
end
