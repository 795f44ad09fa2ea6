# frozen_string_literal: true

module Heron
  class Cluster
    # Logs every thread's backtrace: what a worker does when its master found it stuck
    # (SIGURG, sent just before SIGKILL after `worker_timeout`).
    module ThreadDump
      SIGNAL = "URG"

      # @param logger [Log::Logger]
      # @param reason [String] the first line of the log entry.
      # @return [void]
      def self.log(logger, reason)
        lines = Thread.list.flat_map do |thread|
          ["thread #{thread.inspect}", *(thread.backtrace || []).map { |frame| "    #{frame}" }]
        end
        logger.warn("#{reason}\n#{lines.join("\n")}")
      end
    end
  end
end
