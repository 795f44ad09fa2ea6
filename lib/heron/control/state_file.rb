# frozen_string_literal: true

require "fileutils"
require "json"
require_relative "../config_error"
require_relative "not_running"

module Heron
  module Control
    # The `control_state` file: where this server's control listener actually listens (after a
    # fallback to a free port too) and which process owns it, so that `heron ctl` run in the
    # app's directory talks to this server and never guesses an address that may be another's.
    # Written by the master (or single process) once the listener is open, atomically; removed
    # on exit only while it still names this process (after a hot restart it names the new one).
    class StateFile
      # @param path [String, nil] nil turns writing and deleting into no-ops.
      def initialize(path)
        @path = path && File.expand_path(path)
      end

      # @param url [String] the listener's bind URI.
      # @param tag [String, nil] the process titles' tag.
      # @return [String, nil] why it could not be written (nil when written or off).
      def write(url, tag)
        return nil unless @path
        FileUtils.mkdir_p(File.dirname(@path))
        temporary = "#{@path}.#{Process.pid}.tmp"
        File.write(temporary, "#{JSON.generate('url' => url, 'pid' => Process.pid, 'tag' => tag)}\n")
        File.rename(temporary, @path)
        nil
      rescue SystemCallError => e
        "control_state #{@path} cannot be written (#{e.message}); `heron ctl` needs --control-url"
      end

      # Removes the file if it names this process.
      # @return [void]
      def delete
        File.delete(@path) if @path && owner == Process.pid
      rescue SystemCallError, JSON::ParserError
        nil
      end

      # @return [String, nil] the URL of a running server's listener; nil when there is no file.
      # @raise [ConfigError] when the file is unreadable.
      # @raise [NotRunning] when it names a process that is gone.
      def url
        return nil unless @path && File.exist?(@path)
        record = JSON.parse(File.read(@path))
        return record.fetch("url") if alive?(record.fetch("pid"))
        raise NotRunning, "#{@path} names pid #{record['pid']}, which is not running: start the server, " \
                           "or pass --control-url"
      rescue JSON::ParserError, KeyError, SystemCallError => e
        raise ConfigError, "#{@path} cannot be read (#{e.message})"
      end

      private

      def owner = JSON.parse(File.read(@path))["pid"]

      def alive?(pid)
        Process.kill(0, Integer(pid))
        true
      rescue Errno::EPERM
        true # another user's process: alive
      rescue Errno::ESRCH, ArgumentError, TypeError
        false
      end
    end
  end
end
