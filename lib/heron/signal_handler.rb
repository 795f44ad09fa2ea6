# frozen_string_literal: true

module Heron
  # Traps the signals of a serving process (single mode, or a cluster worker):
  #
  # - TERM and INT: the first stops gracefully, a second one stops at once; QUIT stops at once.
  #   These call the target straight from the trap (its #stop is trap-safe).
  # - `actions`: signals whose handlers must not run in trap context (a hot restart forks, a log
  #   reopen takes locks): the trap only writes the signal's name to a pipe, and a thread of the
  #   handler's own runs the action.
  # - `ignore`: signals that would otherwise end the process (USR1, USR2, TTIN, TTOU by default)
  #   but mean nothing here; each is logged and otherwise has no effect.
  #
  # Signals in none of these keep Ruby's behaviour: PIPE, WINCH, URG and CHLD do nothing;
  # PROF, VTALRM and ALRM are left alone for profilers and timers.
  class SignalHandler
    STOPS = %w[TERM INT QUIT].freeze

    # @param target [#stop] receives `stop(graceful:)`; must be trap-safe.
    # @param actions [Hash{String => #call}] signal name → action run on the handler's thread.
    # @param ignore [Array<String>] signals logged and otherwise ignored.
    # @param logger [#info, nil] where ignored signals are logged.
    # @param on_stop [#call, nil] trap-safe callback run with `graceful` before the target stops.
    def initialize(target, actions: {}, ignore: [], logger: nil, on_stop: nil)
      @target = target
      @actions = actions
      @ignore = ignore - actions.keys
      @logger = logger
      @on_stop = on_stop
      @count = 0
    end

    # Installs the traps (and starts the action thread when there are actions).
    # @return [SignalHandler] self
    def install
      %w[TERM INT].each { |signal| trap(signal) { graceful_then_immediate } }
      trap("QUIT") { stop(false) }
      queued = @actions.keys + @ignore
      start_dispatcher unless queued.empty?
      queued.each { |signal| trap(signal) { @writer.write_nonblock("#{signal}\n", exception: false) } }
      self
    end

    private

    def graceful_then_immediate
      @count += 1
      stop(@count == 1)
    end

    def stop(graceful)
      @on_stop&.call(graceful)
      @target.stop(graceful: graceful)
    end

    def start_dispatcher
      reader, @writer = IO.pipe
      Thread.new do
        while (line = reader.gets)
          dispatch(line.chomp)
        end
      end
    end

    def dispatch(signal)
      action = @actions[signal]
      return @logger&.info("SIG#{signal} ignored (it means nothing in this process)") unless action
      action.call
    rescue StandardError => e
      @logger&.error("SIG#{signal} handler failed", e)
    end
  end
end
