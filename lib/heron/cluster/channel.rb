# frozen_string_literal: true

module Heron
  class Cluster
    # The one pipe every worker writes to and the master reads: a line per message, each written
    # in one write(2) shorter than PIPE_BUF, so lines from different workers never interleave.
    # `beat PID CONNECTIONS PARKED` is a worker's heartbeat (its first one also says it is serving).
    class Channel
      MAX_LINE = 256
      private_constant :MAX_LINE

      # @return [IO] the read end, for the master's select.
      attr_reader :reader

      def initialize
        @reader, @writer = IO.pipe
        @buffer = +""
      end

      # In a worker: sends a heartbeat. Never blocks: a beat is dropped when the pipe is full.
      # @param connections [Integer] the worker's open connections.
      # @param parked [Integer] how many of them wait parked, without a fiber.
      # @return [void]
      def beat(connections, parked = 0)
        @writer.write_nonblock("beat #{Process.pid} #{connections} #{parked}\n", exception: false)
      rescue IOError, SystemCallError
        nil
      end

      # In the master: reads what is there without blocking.
      # @return [Array<Array(Integer, Integer, Integer)>] [pid, connections, parked] per heartbeat received.
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

      def parse(line)
        kind, pid, connections, parked = line.split(" ")
        [Integer(pid), Integer(connections), Integer(parked || 0)] if kind == "beat"
      rescue ArgumentError, TypeError
        nil
      end
    end
  end
end
