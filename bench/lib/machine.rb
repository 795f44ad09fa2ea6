# frozen_string_literal: true

require "etc"
require_relative "proc_fs"

module Bench
  # The lines a results page gives about the machine it ran on.
  module Machine
    module_function

    # @return [String] e.g. "Linux 6.1.0 x86_64, 2 CPUs (AMD EPYC ...), ruby 3.1.2p20 (...)".
    def summary
      uname = Etc.uname
      "#{uname[:sysname]} #{uname[:release]} #{uname[:machine]}, #{Etc.nprocessors} CPUs (#{ProcFS.cpu_model}), #{RUBY_DESCRIPTION}"
    end

    # @return [String] the 1, 5 and 15 minute load averages, e.g. "1.52 1.20 0.98".
    def load = ProcFS.load_averages.join(" ")
  end
end
