# frozen_string_literal: true

require "simplecov"
require "simplecov-html"
require "stringio"

# Writes SimpleCov's HTML report (coverage/index.html) and prints one line about it: the HTML
# formatter's own message names every process whose results were merged (dozens under
# COVERAGE=1, one per `heron` a test spawns) in a single line of thousands of characters.
class CoverageFormatter
  # @param result [SimpleCov::Result] the merged result.
  # @return [void]
  def format(result)
    quietly { SimpleCov::Formatter::HTMLFormatter.new.format(result) }
    branch = result.coverage_statistics[:branch]
    line = Kernel.format("Coverage: lines %.2f%% (%d / %d)", result.covered_percent, result.covered_lines, result.total_lines)
    line += Kernel.format(", branches %.2f%% (%d / %d)", branch.percent, result.covered_branches, result.total_branches) if branch
    puts "#{line}; report in #{File.join(SimpleCov.coverage_path, 'index.html')}"
  end

  private

  def quietly
    stdout = $stdout
    $stdout = StringIO.new
    yield
  ensure
    $stdout = stdout
  end
end
