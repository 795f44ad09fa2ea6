# frozen_string_literal: true

require "json"
require "rbconfig"

module Bench
  # Runs `heron attack` from this checkout (lib/ and heron-attack/lib/ on the load path, nothing
  # installed), for the scripts that drive load with it, and reads its JSON report.
  module HeronAttack
    ROOT = File.expand_path("../..", __dir__)
    RUBY_ARGS = ["-I#{ROOT}/lib", "-I#{ROOT}/heron-attack/lib", "-e",
                 'require "heron/attack"; exit Heron::Attack::CLI.new(ARGV).run', "--"].freeze

    module_function

    # Runs `heron attack ARGS --json FILE` (its output to /dev/null) and returns the report.
    # @param args [Array<String>] URL and options.
    # @param json [String] where the report is written (an old one is removed first).
    # @param env [Hash{String => String}] the generator's environment.
    # @return [Hash] the parsed report.
    # @raise [RuntimeError] when no report was written.
    def report(args, json:, env: {})
      File.delete(json) if File.exist?(json)
      system(env, RbConfig.ruby, *RUBY_ARGS, *args, "--json", json, chdir: ROOT, out: File::NULL, exception: false)
      raise "heron attack wrote no report (#{args.join(' ')})" unless File.exist?(json)
      JSON.parse(File.read(json))
    end
  end
end
