# frozen_string_literal: true

module Heron
  class Cluster
    # The one pipe every worker writes to and the master reads: a line per message, each written
    # in one write(2) shorter than PIPE_BUF, so lines from different workers never interleave.
    # `beat PID CONNECTIONS PARKED SERVED` is a worker's heartbeat (its first one also says it is
    # serving; SERVED counts its requests); `mold PID` says a promoted worker is ready to fork
    # (Mold), `adopt INDEX PID` that it forked worker INDEX as PID.
    class Channel
      MAX_LINE = 256
      private_constant :MAX_LINE

      # @return [IO] the read end, for the master's select.
      attr_reader :reader

      def initialize
        @reader, @writer = IO.pipe
        @buffer = +""
        @notes = []
      end

      # In a worker: sends a heartbeat. Never blocks: a beat is dropped when the pipe is full.
      # @param connections [Integer] the worker's open connections.
      # @param parked [Integer] how many of them wait parked, without a fiber.
      # @return [void]
      def beat(connections, parked = 0, served = 0)
        send_line("beat #{Process.pid} #{connections} #{parked} #{served}")
      end

      # In a mold: says it is ready to fork workers, or that it forked worker `index` as `pid`.
      # Unlike beats these must not be lost: the write waits for room in the pipe.
      # @param kind [String] "mold" or "adopt".
      # @param numbers [Array<Integer>]
      # @return [void]
      def note(kind, *numbers)
        @writer.write("#{kind} #{numbers.join(' ')}\n")
      rescue IOError, SystemCallError
        nil
      end

      # In the master: the `mold` and `adopt` lines read so far, emptied.
      # @return [Array<Array(String, Integer, ...)>]
      def notes
        @notes.slice!(0..)
      end

      # In the master: reads what is there without blocking.
      # @return [Array<Array(Integer, Integer, Integer, Integer)>] [pid, connections, parked, served]
      #   per heartbeat received (other lines go to {#notes}).
      def read
        chunk = @reader.read_nonblock(65_536, exception: false)
        @buffer << chunk if chunk.is_a?(String)
        lines = @buffer.split("\n", -1)
        @buffer = lines.pop.to_s[0, MAX_LINE]
        lines.filter_map { |line| parse(line) }
      end

      # @return [void]
      def close
        [@reader, @writer].each { |io| io.close unless io.closed? }
      end

      private

      def send_line(line)
        @writer.write_nonblock("#{line}\n", exception: false)
      rescue IOError, SystemCallError
        nil
      end

      def parse(line)
        kind, *fields = line.split(" ")
        numbers = fields.map { |field| Integer(field) }
        return [numbers[0], numbers[1], numbers[2] || 0, numbers[3] || 0] if kind == "beat"
        @notes << [kind, *numbers] if %w[mold adopt].include?(kind)
        nil
      rescue ArgumentError, TypeError
        nil
      end
    end
  end
end
