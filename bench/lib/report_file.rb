# frozen_string_literal: true

module Bench
  # Where a script that renders its own whole report (not a {ResultsPage}) leaves it.
  module ReportFile
    module_function

    # Writes the report to `path` (--out, a page in bench/results/ by default) and prints it.
    # @param path [String]
    # @param text [String]
    # @return [void]
    def publish(path, text)
      File.write(path, text)
      puts text
    end
  end
end
