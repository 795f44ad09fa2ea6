# frozen_string_literal: true

require "etc"
require_relative "machine"

module Bench
  # Writes what a benchmark script prints into its results page in bench/results/, so every
  # script leaves its last run on disk beside the page's hand-written reading of earlier runs.
  # The run goes between two markers at the end of the page (added the first time): the text
  # above them is kept as it is.
  #
  #   Bench::ResultsPage.capture("uploads.md")   # at the top of a script
  module ResultsPage
    BEGIN_MARK = "<!-- bench: last run, written by the script -->"
    END_MARK = "<!-- bench: end of last run -->"
    DIR = File.expand_path("../results", __dir__)

    module_function

    # Tees $stdout from here on and, when the script exits successfully, writes what it printed
    # into the page between the markers, under a line with the date, command and load average.
    # Nothing is written when the script was asked for its help.
    # @param page [String] the page's file name in bench/results/.
    # @return [void]
    def capture(page)
      return if ARGV.intersect?(%w[-h --help]) # a help text is not a run
      command = "bundle exec ruby #{$PROGRAM_NAME.sub("#{File.expand_path('../..', __dir__)}/", '')} #{ARGV.join(' ')}".strip
      started = [Time.now.utc, loadavg]
      tee = Tee.new($stdout)
      $stdout = tee
      at_exit { write(page, command, started, tee.text) if $!.nil? || ($!.is_a?(SystemExit) && $!.success?) }
    end

    # @param page [String]
    # @param command [String]
    # @param started [Array(Time, String)]
    # @param output [String]
    # @return [void]
    def write(page, command, started, output)
      path = File.join(DIR, page)
      kept = File.exist?(path) ? File.read(path).split(BEGIN_MARK, 2).first.rstrip : "# #{File.basename(page, '.md')}"
      time, load = started
      File.write(path, <<~MD)
        #{kept}

        #{BEGIN_MARK}
        ## Last run

        `#{command}`, #{time.strftime('%Y-%m-%d %H:%M UTC')}, #{Etc.nprocessors} CPUs, load average #{load} at the start and #{loadavg} at the end.

        ```
        #{output.rstrip}
        ```
        #{END_MARK}
      MD
    end

    def loadavg = Machine.load

    # Writes to the real $stdout and keeps a copy.
    class Tee
      # @return [String] everything written so far.
      attr_reader :text

      # @param io [IO]
      def initialize(io)
        @io = io
        @text = +""
      end

      # @return [Integer]
      def write(*parts)
        parts.each { |part| @text << part.to_s }
        @io.write(*parts)
      end

      # @return [nil]
      def puts(*lines)
        write(lines.empty? ? "\n" : lines.flatten.map { |line| line.to_s.end_with?("\n") ? line.to_s : "#{line}\n" }.join)
        nil
      end

      # @return [nil]
      def print(*parts)
        write(*parts)
        nil
      end

      # @return [nil]
      def printf(format_string, *args) = print(format(format_string, *args))

      # @return [Tee]
      def <<(part)
        write(part)
        self
      end

      # @return [void]
      def flush = @io.flush

      def respond_to_missing?(name, include_all = false) = @io.respond_to?(name, include_all)

      def method_missing(name, ...) = @io.respond_to?(name) ? @io.public_send(name, ...) : super
    end
  end
end
