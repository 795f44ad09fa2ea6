# frozen_string_literal: true

require_relative "../usage_error"

module Heron
  module Attack
    class Options
      # What the run writes besides the text report (--per-request lines, --json, --html,
      # --hdr-log, --csv), or the --compare of earlier JSON reports.
      class Output
        MAX_COMPARE = 8

        # @return [Boolean] print a line per request.
        attr_reader :per_request
        # @return [String, nil] JSON output, HTML output.
        attr_reader :json, :html
        # @return [String, nil] HdrHistogram interval log output, per-second CSV output.
        attr_reader :hdr_log, :csv
        # @return [Array<String>, nil] the JSON files of --compare (2 to {MAX_COMPARE}).
        attr_reader :compare

        # Starts with no files and no per-request lines.
        def initialize
          @per_request = false
        end

        # Defines --per-request, --json, --html, --hdr-log, --csv and --compare.
        # @param parser [OptionParser]
        # @return [void]
        def define(parser)
          parser.on("--per-request", "print 'request N status=S latency=Xms' lines") { @per_request = true }
          parser.on("--json FILE", "write the report as JSON") { |v| @json = v }
          parser.on("--html FILE", "write a self-contained HTML page with charts") { |v| @html = v }
          parser.on("--hdr-log FILE", "write an HdrHistogram interval log (per-second corrected latency, us)") { |v| @hdr_log = v }
          parser.on("--csv FILE", "write per-second stats as CSV") { |v| @csv = v }
          parser.on("--compare A.json B.json ...", "compare --json runs: a table of percentiles and ratios to A (and --html)") { |v| @compare = [v] }
        end

        # With --compare, takes the arguments left after the options: the files after the first.
        # @param rest [Array<String>] emptied when comparing.
        # @return [void]
        def take_compared!(rest)
          @compare&.concat(rest.slice!(0..))
        end

        # @return [void]
        # @raise [UsageError] unless --compare has 2 to {MAX_COMPARE} files.
        def check_compare!
          raise UsageError, "--compare takes two or more files: --compare A.json B.json [C.json ...]" if @compare.size < 2
          raise UsageError, "--compare takes at most #{MAX_COMPARE} files" if @compare.size > MAX_COMPARE
        end
      end
    end
  end
end
