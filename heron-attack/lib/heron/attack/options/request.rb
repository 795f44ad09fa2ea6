# frozen_string_literal: true

require_relative "../usage_error"

module Heron
  module Attack
    class Options
      # What is sent: the method, headers and body of the URL's request, or a --targets file,
      # and how targets are picked (--pick, --seed).
      class Request
        # @return [String] request method. @return [Array<String>] extra header lines.
        attr_reader :method, :headers
        # @return [String, nil] request body (from --body or --body-file).
        # @return [String, nil] the --targets file.
        attr_reader :body, :targets_file
        # @return [String] how targets are chosen: "round-robin" or "random".
        # @return [Integer] the seed of "random".
        attr_reader :pick, :seed

        # Starts from GET, no headers or body, round robin with a new seed.
        def initialize
          @method = "GET"
          @headers = []
          @pick = "round-robin"
          @seed = Random.new_seed % (2**31)
        end

        # Defines --method, --header, --body, --body-file, --targets, --pick and --seed.
        # @param parser [OptionParser]
        # @return [void]
        def define(parser)
          parser.on("-X", "--method M", "request method (default GET)") { |v| @method = v }
          parser.on("-H", "--header 'Name: value'", "add a header (repeatable)") { |v| @headers << header(v) }
          parser.on("--body STRING", "request body") { |v| @body = v }
          parser.on("--body-file FILE", "request body from a file") { |v| @body = read_body(v) }
          parser.on("--targets FILE", "targets: 'METHOD URL [weight=N]', then 'Name: value' lines, '@FILE' or '@@TEXT' body") { |v| @targets_file = v }
          parser.on("--pick MODE", %w[round-robin random], "choose targets round-robin (default) or at random, by weight") { |v| @pick = v }
          parser.on("--seed N", Integer, "seed for --pick random (default: a new one, printed in the JSON)") { |v| @seed = v }
        end

        private

        def header(text)
          raise UsageError, "bad header #{text.inspect} (want 'Name: value')" unless text.match?(/\A[^:\s]+:/)
          text
        end

        def read_body(path)
          File.binread(path)
        rescue SystemCallError => e
          raise UsageError, "cannot read body file: #{e.message}"
        end
      end
    end
  end
end
