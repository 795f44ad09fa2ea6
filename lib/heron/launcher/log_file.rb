# frozen_string_literal: true

module Heron
  class Launcher
    # The `log_file` directive: both logs (access and events) appended to one file, reopened by
    # path on SIGHUP so logrotate can move it away. The File object stays the same across a
    # reopen, so the logger and forked workers (which reopen their own copy) keep using it.
    class LogFile
      # @param path [String]
      # @raise [SystemCallError] when the file cannot be opened for appending.
      def initialize(path)
        @path = File.expand_path(path)
        @file = File.open(@path, "a")
        @file.sync = true
      end

      # @return [File] the open file.
      attr_reader :file

      # Points the configuration's log_io and error_io at the file.
      # @param config [Configuration]
      # @return [LogFile] self
      def attach(config)
        config.log_io = config.error_io = @file
        self
      end

      # Reopens the path (a new file if the old one was renamed away).
      # @return [void]
      def reopen
        @file.reopen(@path, "a")
        @file.sync = true
      end
    end
  end
end
