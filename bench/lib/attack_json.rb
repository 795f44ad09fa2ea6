# frozen_string_literal: true

require "json"
require "open3"
require "rbconfig"

module Bench
  # Runs `heron attack` (this checkout's heron-attack/) in a child process and returns its JSON
  # report; a run that fails aborts the benchmark with its output.
  module AttackJSON
    ROOT = File.expand_path("../..", __dir__)

    module_function

    # @param args [Array<String>] the URL and options (without --json).
    # @param dir [String] where the JSON file goes.
    # @return [Hash] the report (docs/attack.md's schema).
    def run(args, dir)
      json = File.join(dir, "attack.json")
      argv = [RbConfig.ruby, "-I", File.join(ROOT, "heron-attack/lib"), File.join(ROOT, "heron-attack/exe/heron-attack"), *args,
              "--json", json]
      output, status = Open3.capture2e(*argv)
      abort "heron attack failed:\n#{output}" unless status.success?
      JSON.parse(File.read(json))
    end
  end
end
