# frozen_string_literal: true

module Heron
  module Profiler
    # Finds N+1 queries: the same normalised SQL run from the same call site at least `threshold`
    # times in one request, and words them for a log line and a response header.
    class NPlusOneDetector
      HEADER_LIMIT = 512
      NONE = [].freeze

      # @return [Integer] how many repeats make an N+1.
      attr_reader :threshold

      # @param threshold [Integer] how many repeats make an N+1 (at least 2).
      def initialize(threshold = 2)
        @threshold = [threshold.to_i, 2].max
      end

      # @param queries [Array<Query>] a request's queries, in order.
      # @return [Array<Hash>] {call_site:, normalized:, count:}, most repeated first.
      def detect(queries)
        return NONE if queries.size < @threshold
        counts = repeated_sites(queries).each_with_object(Hash.new(0)) { |query, tally| tally[query.fingerprint] += 1 }
        found = counts.select { |_, count| count >= @threshold }
        found.map { |(site, sql), count| { call_site: site, normalized: sql, count: count } }
             .sort_by { |finding| -finding[:count] }
      end

      # @param queries [Array<Query>]
      # @return [Array<Query>] the queries whose call site ran at least `threshold` of them (only
      #   those need normalising).
      def repeated_sites(queries)
        sites = queries.each_with_object(Hash.new(0)) { |query, tally| tally[query.call_site] += 1 }
        queries.select { |query| sites[query.call_site] >= @threshold }
      end

      # @param findings [Array<Hash>] what {#detect} returned (not empty).
      # @param limit [Integer] the longest value to return, in bytes.
      # @return [String] e.g. `2 queries x12 at app/users.rb:14 (SELECT ...); x3 at ...`, ASCII only.
      def header(findings, limit = HEADER_LIMIT)
        parts = findings.map { |finding| "x#{finding[:count]} at #{finding[:call_site]} (#{finding[:normalized]})" }
        text = "#{findings.size} #{findings.size == 1 ? 'query' : 'queries'} #{parts.join('; ')}"
        text = text.encode("US-ASCII", invalid: :replace, undef: :replace, replace: "?").tr("\r\n\t", "   ")
        text.bytesize > limit ? "#{text.byteslice(0, limit - 3)}..." : text
      end

      # @param findings [Array<Hash>] what {#detect} returned (not empty).
      # @param where [String] the request, e.g. "GET /users".
      # @return [String] one warning line per finding.
      def message(findings, where)
        findings.map do |finding|
          "heron: N+1 query in #{where}: #{finding[:count]}x at #{finding[:call_site] || '(unknown)'}: " \
            "#{finding[:normalized]}\n"
        end.join
      end
    end
  end
end
