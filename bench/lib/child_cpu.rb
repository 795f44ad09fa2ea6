# frozen_string_literal: true

module Bench
  # CPU seconds (user + system) of this process's child processes that have been waited for: the
  # load generators' (curl's) share of a measurement, next to the server's.
  module ChildCpu
    module_function

    # @return [Float] seconds so far.
    def seconds
      times = Process.times
      times.cutime + times.cstime
    end
  end
end
