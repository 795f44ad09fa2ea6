# frozen_string_literal: true

if ENV["COVERAGE"] == "1"
  require "simplecov"
  SimpleCov.start do
    enable_coverage :branch
    add_filter "/test/"
    command_name "minitest-#{Process.pid}"
  end
end

require "minitest/autorun"
# heron-profiler's and heron-attack's lib/ (Bundler adds them too, as path gems in the Gemfile).
%w[heron-profiler heron-attack].each do |gem_dir|
  lib = File.expand_path("../#{gem_dir}/lib", __dir__)
  $LOAD_PATH.unshift(lib) unless $LOAD_PATH.include?(lib)
end
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
