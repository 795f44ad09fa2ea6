# frozen_string_literal: true

module Heron
  # Traps SIGTERM, SIGINT and SIGQUIT for a server: the first TERM/INT stops gracefully, a
  # second one or a QUIT stops at once.
  class SignalHandler
    # @param target [#stop] receives `stop(graceful:)`; must be trap-safe.
    def initialize(target)
      @target = target
      @count = 0
    end

    # Installs the traps.
    # @return [SignalHandler] self
    def install
      %w[TERM INT].each { |signal| trap(signal) { graceful_then_immediate } }
      trap("QUIT") { @target.stop(graceful: false) }
      self
    end

    private

    def graceful_then_immediate
      @count += 1
      @target.stop(graceful: @count == 1)
    end
  end
end
