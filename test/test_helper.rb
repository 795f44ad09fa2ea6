# frozen_string_literal: true

if ENV["COVERAGE"] == "1"
  require "simplecov"
  require_relative "support/coverage_formatter"
  require_relative "support/coverage_processes"
  SimpleCov.start do
    formatter CoverageFormatter
    enable_coverage :branch
    add_filter "/test/"
    command_name "minitest-#{Process.pid}"
  end
  # The spawned processes' results first, so that the report holds them.
  SimpleCov.at_exit do
    CoverageProcesses.fold
    SimpleCov.result.format!
  end
end

require "minitest/autorun"
require_relative "support/warning_guard"
require "socket"
require "timeout"
require "rack"
require "rack/lint"
require "heron"
require_relative "support/server_helper"
require_relative "support/process_helper"
require_relative "support/env_helper"
require_relative "support/free_port"

Minitest::Test.include(FreePort)
require_relative "support/load_helper"
