# frozen_string_literal: true

module Heron
  class Cluster
    # Resident set sizes read from /proc (Linux); nil where it cannot be read.
    module Memory
      # @param pid [Integer]
      # @return [Integer, nil] the process's RSS in bytes.
      def self.rss(pid)
        line = File.foreach("/proc/#{pid}/status").find { |entry| entry.start_with?("VmRSS:") }
        line && line[/\d+/].to_i * 1024
      rescue SystemCallError, IOError
        nil
      end
    end
  end
end
