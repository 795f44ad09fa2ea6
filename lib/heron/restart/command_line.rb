# frozen_string_literal: true

require "rbconfig"

module Heron
  module Restart
    # The command line this process was started with, read once when Heron is loaded: what a
    # hot restart (SIGUSR2) or `tmp/restart.txt` runs again when neither `heron` nor Rails said
    # how it started. ARGV is no help by then: rackup has parsed its options out of it, and Rails
    # has shifted `server` off it. Linux keeps the process's own argv in /proc/self/cmdline;
    # elsewhere (or when it cannot be read) it is the interpreter, $PROGRAM_NAME and ARGV.
    module CommandLine
      PROC_FILE = "/proc/self/cmdline"

      class << self
        # @return [Array<String>] the command line as captured when this file was loaded.
        attr_reader :original

        # Reads a process's command line.
        # @param path [String] a cmdline file: arguments separated by NUL bytes.
        # @return [Array<String>]
        def read(path = PROC_FILE)
          words = File.binread(path).force_encoding(Encoding.default_external).split("\0").reject(&:empty?)
          words = retitled(words.first) if words.size == 1
          words.empty? ? fallback : words
        rescue SystemCallError, IOError
          fallback
        end

        # A command given as one string (Rails' restart_cmd: its words joined by spaces) as an argv.
        # @param command [Array<String>, String]
        # @return [Array<String>]
        def words(command)
          command.is_a?(String) ? command.split(" ") : command
        end

        private

        # Bundler's `bundle exec` of a Ruby executable sets the process title to "PROGRAM ARGS"
        # (one string, its words joined by spaces), which replaces the argv /proc shows.
        def retitled(title)
          return [title] unless title.include?(" ")
          words = title.split(" ")
          File.file?(words.first) ? [RbConfig.ruby, *words] : words
        end

        def fallback
          [RbConfig.ruby, $PROGRAM_NAME, *ARGV]
        end
      end

      @original = read.freeze
    end
  end
end
