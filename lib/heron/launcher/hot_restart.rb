# frozen_string_literal: true

require "json"
require_relative "../restart"
require_relative "../clock"

module Heron
  class Launcher
    # SIGUSR2: starts a new Heron with the same command ({Restart.argv}: so new code and gems are
    # loaded, under `heron`, rackup and `rails server` alike),
    # handing over the listening sockets as inherited descriptors (HERON_LISTEN_FDS, read by
    # {Binder::Inherited}). The new process tells the old one it is serving by writing to a pipe
    # whose descriptor it finds in HERON_READY_FD; only then does the old process stop accepting
    # and drain. If the new process exits before that, the old one keeps serving.
    #
    # A stop (TERM, INT, QUIT) that reaches the old process while the new one is still booting
    # cancels the restart ({#cancel}): the stop is passed on to the new process, which ends
    # before it ever serves, and the old one waits for it ({#finish}) before it exits itself.
    # Nobody is left serving a port whose server was asked to stop.
    #
    # Single and cluster mode share it whole: the refusals ({.ignored?}), the start, and what
    # follows the new process's answer ({#conclude}); they differ only in how they drain.
    class HotRestart
      READY = "ready\n"

      # Logs why a SIGUSR2 is ignored, if it is.
      # @param logger [Log::Logger]
      # @param under_way [Boolean] whether a hot restart is already running.
      # @param stopping [Boolean] whether this server is stopping.
      # @return [Boolean] true when the signal is ignored.
      def self.ignored?(logger, under_way:, stopping:)
        reason = ("a hot restart is under way" if under_way) || ("this server is stopping" if stopping)
        logger.warn("SIGUSR2 ignored: #{reason}") if reason
        !reason.nil?
      end

      # @param binder [Binder] whose listening sockets are handed over.
      # @param control [Control::Handle] whose listener is handed over.
      # @param notifier [Systemd::Notifier]
      # @param logger [Log::Logger]
      # @param role [String] what the new process is, in log lines ("process", "master").
      # @param command [Array<String>] program and arguments to run.
      def initialize(binder, control, notifier, logger, role:, command: Restart.argv)
        @binder = binder
        @control = control
        @notifier = notifier
        @logger = logger
        @role = role
        @command = command
      end

      # @return [IO] the pipe the new process answers on (for select).
      attr_reader :reader
      # @return [Integer] the new process's pid.
      attr_reader :pid

      # @return [Boolean] whether a stop cancelled this restart.
      def cancelled? = @cancelled == true

      # Tells systemd this server reloads, and spawns the new process.
      # @return [HotRestart] self
      def start
        @notifier.reloading
        @reader, writer = IO.pipe
        listeners = @binder.by_key.merge(@control.handover)
        @pid = Process.spawn(environment(listeners, writer), *@command, **redirects(listeners, writer),
                             chdir: self.class.directory)
        @logger.info("hot restart: started pid #{@pid}; waiting for it to serve")
        self
      ensure
        writer&.close
      end

      # Reads the new process's answer without blocking.
      # @return [Symbol, nil] :ready, :failed (it exited first), or nil (still booting).
      def poll
        data = @reader.read_nonblock(64, exception: false)
        return nil if data == :wait_readable
        @answer = data == READY ? :ready : :failed
      end

      # Blocks until the new process answers.
      # @return [Symbol] :ready or :failed.
      def wait
        @reader.wait_readable
        poll || wait
      end

      # Acts on the new process's answer, closing the pipe. Ready: the control listener closes
      # first (from now on the new process answers health checks), then the listening sockets, and
      # the block drains this process. Cancelled by a stop, or failed: logged; after a failure
      # this process keeps serving and tells systemd so.
      # @param answer [Symbol] from {#poll} or {#wait}.
      # @param status [String] the status systemd is told after a failure.
      # @yield once the new process serves: stop this one gracefully.
      # @return [Symbol] :ready, :cancelled or :failed.
      def conclude(answer, status)
        close
        return handed_over { yield } if answer == :ready
        return cancelled if cancelled?
        @logger.error("hot restart failed: the new #{@role} exited before serving; this one keeps serving")
        @notifier.ready(status: status)
        :failed
      end

      # Passes a stop on to the new process (as TERM: a second one stops it at once, as it would
      # the old one) unless it already serves. Trap-safe.
      # @return [void]
      def cancel
        return if @answer == :ready || !@pid
        @cancelled = true
        Process.kill("TERM", @pid)
      rescue Errno::ESRCH
        nil
      end

      # After a {#cancel}: waits up to `timeout` seconds for the new process to exit, then kills it.
      # @param timeout [Float]
      # @return [void]
      def finish(timeout)
        return unless @cancelled
        deadline = Clock.now + timeout
        until Process.wait(@pid, Process::WNOHANG)
          return Process.kill("KILL", @pid) if Clock.now > deadline
          sleep 0.05
        end
      rescue Errno::ECHILD, Errno::ESRCH
        nil # reaped already (a cluster master reaps every child)
      end

      # Closes the pipe, and reaps the new process if it already exited (a failed restart; a
      # running one is left alone: it outlives this process). No Process.detach: its waiter
      # thread would keep a cluster master's waitpid(-1) from reaping workers.
      # @return [void]
      def close
        @reader&.close unless @reader&.closed?
        Process.wait(@pid, Process::WNOHANG) if @pid
      rescue SystemCallError
        nil
      end

      # In the new process: takes the pipe to the old one out of the environment (once), marked
      # close-on-exec. A cluster closes it in its workers, so the old process sees EOF if this
      # master dies before it is ready, whatever its workers do.
      # @param env [Hash]
      # @return [IO, nil] the pipe, or nil when this process was not started by a hot restart.
      def self.take_ready_pipe(env = ENV)
        fd = Integer(env.delete("HERON_READY_FD") || "", exception: false) or return nil
        IO.for_fd(fd).tap { |pipe| pipe.close_on_exec = true }
      rescue SystemCallError, ArgumentError
        nil
      end

      # Tells the old process this one serves, and closes the pipe.
      # @param pipe [IO, nil] from {.take_ready_pipe}.
      # @return [Boolean] whether there was an old process to tell.
      def self.announce_ready(pipe)
        return false unless pipe && !pipe.closed?
        pipe.write(READY)
        true
      rescue SystemCallError, IOError
        false
      ensure
        pipe&.close unless pipe.nil? || pipe.closed?
      end

      # @return [String] the working directory to restart in: $PWD when it is the same directory
      #   as the current one (it keeps a deploy's `current` symlink unresolved), else Dir.pwd.
      def self.directory
        pwd = ENV["PWD"]
        return pwd if pwd && File.directory?(pwd) && File.identical?(pwd, Dir.pwd)
        Dir.pwd
      end

      private

      def handed_over
        @logger.info("hot restart: the new #{@role} serves; draining this one")
        @control.handed_over!
        @binder.handed_over!
        yield
        :ready
      end

      def cancelled
        @logger.info("hot restart cancelled by the stop: the new #{@role} (pid #{@pid}) ends before serving")
        :cancelled
      end

      def environment(listeners, writer)
        fds = listeners.to_h { |key, io| [io.fileno.to_s, key] }
        # WATCHDOG_PID names this process; without it the new one pings systemd's watchdog itself.
        { "HERON_LISTEN_FDS" => JSON.generate(fds), "HERON_READY_FD" => writer.fileno.to_s, "WATCHDOG_PID" => nil }
      end

      # By descriptor number: a TLS listener is a delegator, not an IO.
      def redirects(listeners, writer)
        [*listeners.values, writer].to_h { |io| [io.fileno, io.fileno] }
      end
    end
  end
end
