# frozen_string_literal: true

require_relative "clock"

module Bench
  # Peak RSS of a server while a block runs: sampled every 20 ms from another thread.
  module PeakRss
    module_function

    # @param read [#call] returns the RSS in KiB now (e.g. `server.method(:rss_kb)`).
    # @return [Array(Integer, Float)] the peak RSS in KiB seen while the block ran, and the
    #   block's wall seconds.
    def during(read)
      peak = read.call
      done = false
      sampler = Thread.new { (peak = [peak, read.call].max; sleep 0.02) until done }
      started = Clock.now
      yield
      wall = Clock.now - started
      done = true
      sampler.join
      [peak, wall]
    end
  end
end
