# frozen_string_literal: true

module Heron
  class Launcher
    # What SIGHUP does in a serving process (single mode, or a cluster worker; the master only
    # reopens its log file and forwards the signal): reopen `log_file` (logrotate) and read the
    # certificate files of TLS listeners again (connections accepted afterwards get the new
    # certificate). A certificate that cannot be read is logged and the old one stays in use.
    class Hangup
      # @param log_file [LogFile, nil]
      # @param listeners [Array<BasicSocket, TLS::Listener>]
      # @param logger [Log::Logger]
      def initialize(log_file, listeners, logger)
        @log_file = log_file
        @listeners = listeners
        @logger = logger
      end

      # @return [void]
      def call
        @log_file&.reopen
        reloaded = @listeners.count { |listener| reload(listener) }
        @logger.info("SIGHUP: #{@log_file ? 'log file reopened' : 'no log_file to reopen'}" \
                     "#{", #{reloaded} TLS certificate(s) reloaded" if reloaded.positive?}")
      end

      private

      def reload(listener)
        return false unless listener.respond_to?(:reload)
        listener.reload
        true
      rescue ConfigError => e
        @logger.error("SIGHUP: #{e.message}; the old certificate stays in use")
        false
      end
    end
  end
end
