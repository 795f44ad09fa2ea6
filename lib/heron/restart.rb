# frozen_string_literal: true

require_relative "restart/command_line"

module Heron
  # How this server starts again, and stop-and-re-exec of the whole server for development's
  # `tmp/restart.txt` (see {Heron::Railtie}). The entry points record how the process was
  # started ({.prepare}): `heron` its own argv, `rails server` Rails' restart_cmd, rackup the
  # {CommandLine} it was started with; {.argv} is that command for a hot restart
  # ({Launcher::HotRestart}) too. A {.request} stops the server gracefully with TERM, and
  # {Launcher#run} then replaces the process with the same command (same pid, fresh code). In a
  # cluster worker a request stops only that worker, which the master replaces with a fresh one.
  module Restart
    @command = nil
    @root_pid = nil
    @requested = false

    class << self
      # @return [Array<String>, String, nil] the command that started the server: an argv, or a
      #   shell string such as Rails' restart_cmd; nil when unknown (plain rackup).
      attr_reader :command

      # Records how this server process was started.
      # @param command [Array<String>, String, nil]
      # @return [void]
      def prepare(command)
        @command = command
        @root_pid = Process.pid
      end

      # @return [Array<String>] the argv that starts this server again: the recorded command,
      #   else the command line this process was started with.
      def argv
        @command ? CommandLine.words(@command) : CommandLine.original
      end

      # @return [Boolean] whether a restart was asked for.
      def requested?
        @requested
      end

      # Asks for a restart: stops this process gracefully (TERM) so that it re-executes itself, or,
      # in a cluster worker, so that the master forks a fresh worker.
      # @param reason [String] said on stderr.
      # @return [Boolean] false when the server cannot restart itself (its command is unknown).
      def request(reason)
        worker = @root_pid && Process.pid != @root_pid
        unless worker || @command
          $stderr.puts("heron: #{reason}, but this server was not started by `heron` or `rails server`: restart it by hand")
          return false
        end
        $stderr.puts("heron: #{reason}: #{worker ? 'restarting this worker' : 'restarting'}")
        @requested = !worker
        Process.kill("TERM", Process.pid)
        true
      end

      # Replaces the process with its own command when a restart was requested; returns otherwise.
      # @return [void]
      def exec_if_requested
        return unless @requested && @command
        $stdout.flush
        $stderr.flush
        Kernel.exec(*argv)
      end
    end
  end
end
