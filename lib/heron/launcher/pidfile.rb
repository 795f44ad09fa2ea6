# frozen_string_literal: true

module Heron
  class Launcher
    # The `pidfile` directive: the serving master's pid, written once it is ready (so after a hot
    # restart it names the new master) and removed on exit only while it still names this process.
    class Pidfile
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
      end

      # Removes the file if it names this process.
      # @return [void]
      def delete
        File.delete(@path) if @path && File.read(@path).to_i == Process.pid
      rescue SystemCallError
        nil
      end
    end
  end
end
