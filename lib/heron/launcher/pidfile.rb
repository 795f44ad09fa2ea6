# frozen_string_literal: true

module Heron
  class Launcher
    # The `pidfile` directive: the serving master's pid, written once it is ready (so after a hot
    # restart it names the new master), written again when something else removed it while this
    # master serves ({#restore}, {#rewrite_after}), and removed on exit only while it still names
    # this process.
    class Pidfile
      # How often {#rewrite_after} looks whether the previous master is gone, in seconds.
      PARENT_POLL = 0.1

      # @param path [String, nil] nil turns every call into a no-op.
      def initialize(path)
        @path = path && File.expand_path(path)
      end

      # Writes this process's pid (atomically: a reader never sees an empty file).
      # @return [void]
      # @raise [SystemCallError] when the directory is not writable.
      def write
        return unless @path
        temporary = "#{@path}.#{Process.pid}.tmp"
        File.write(temporary, "#{Process.pid}\n")
        File.rename(temporary, @path)
        @written = true
      end

      # Writes the file again when it went missing after {#write}: rackup's and Rails' pid file is
      # removed by an at_exit hook of theirs in every process that inherited it (a cluster worker
      # that exits), whatever pid it names.
      # @return [void]
      def restore
        write if @written && !File.exist?(@path)
      rescue SystemCallError
        nil
      end

      # After a hot restart: writes the file again once the previous master (this process's
      # parent until it exits) is gone, since its exit may remove the file (rackup's at_exit hook
      # does). Waits on a thread of its own.
      # @param previous [Integer] the previous master's pid.
      # @return [Thread, nil]
      def rewrite_after(previous)
        return unless @path
        Thread.new do
          Thread.current.name = "heron pidfile"
          sleep PARENT_POLL while Process.ppid == previous
          write unless names_self?
        end
      end

      # Removes the file if it names this process.
      # @return [void]
      def delete
        File.delete(@path) if @path && names_self?
      rescue SystemCallError
        nil
      end

      private

      def names_self?
        File.read(@path).to_i == Process.pid
      rescue SystemCallError
        false
      end
    end
  end
end
