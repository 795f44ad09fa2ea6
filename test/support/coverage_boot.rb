# frozen_string_literal: true

# Loaded with `ruby -r` into the `heron` processes the tests spawn, so code that only runs there
# (launcher, cluster master, forked workers, signal handling) counts towards coverage. Results
# are stored in coverage/processes/PID/ and folded into coverage/.resultset.json by the test
# process when it ends (CoverageProcesses).
if ENV["COVERAGE"] == "1"
  require "simplecov"
  require_relative "coverage_processes"
  SimpleCov.root(File.expand_path("../..", __dir__))
  SimpleCov.coverage_dir CoverageProcesses.dir(Process.pid)
  SimpleCov.command_name "heron-process-#{Process.pid}"
  SimpleCov.print_error_status = false
  SimpleCov.formatter SimpleCov::Formatter::SimpleFormatter
  SimpleCov.start do
    enable_coverage :branch
    add_filter "/test/"
    enable_for_subprocesses true
    at_fork do |pid|
      SimpleCov.coverage_dir CoverageProcesses.dir(pid)
      SimpleCov.command_name "heron-worker-#{pid}"
      SimpleCov.print_error_status = false
      SimpleCov.formatter SimpleCov::Formatter::SimpleFormatter
      SimpleCov.minimum_coverage 0
      SimpleCov.start
    end
  end
end
