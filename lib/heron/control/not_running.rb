# frozen_string_literal: true

module Heron
  module Control
    # `heron ctl` found no server to talk to: no state file, or one naming a process that is gone,
    # and no address given or configured.
    class NotRunning < StandardError; end
  end
end
