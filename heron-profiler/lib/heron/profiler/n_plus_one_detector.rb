# frozen_string_literal: true

module Heron
  module Profiler
    # Finds N+1 queries: the same normalised SQL run from the same call site at least `threshold`
    # times in one request, and associations loaded up front but never read (unused eager
    # loading, {Sql::EagerLoads}), and words them for a log line and a response header.
    #
    # A safelist (`config.n_plus_one_safelist`) leaves out repeats the application means to run:
    # an entry with a `.rb` file (`app/views/feed.rb`, or `app/views/feed.rb:14` for one line)
    # matches call sites, any other entry is a table name matched against the tables the
    # statement reads or writes (FROM, JOIN, UPDATE, INTO; quoted or not, case-insensitive).
    class NPlusOneDetector
      HEADER_LIMIT = 512
      NONE = [].freeze
      TABLES = /\b(?:FROM|JOIN|UPDATE|INTO)\s+[`"\[]?(?:\w+[`"\]]?\.[`"\[]?)?(\w+)/i.freeze

      # @return [Integer] how many repeats make an N+1.
      attr_reader :threshold

      # @param threshold [Integer] how many repeats make an N+1 (at least 2).
      # @param safelist [Array<String>] call sites (`file.rb`, `file.rb:LINE`) and table names
      #   never reported.
      def initialize(threshold = 2, safelist = [])
        @threshold = [threshold.to_i, 2].max
        sites, tables = Array(safelist).partition { |entry| entry.match?(/\.rb(?::\d+)?\z/) }
        @sites = sites.map { |site| site.match?(/:\d+\z/) ? site : "#{site}:" }
        @tables = tables.to_h { |table| [table.downcase, true] }
      end

      # @param finding [Hash] one of {#detect}'s findings before the safelist.
      # @return [Boolean] whether the safelist covers it.
      def safelisted?(finding)
        site = finding[:call_site].to_s
        return true if @sites.any? { |entry| entry.end_with?(":") ? site.start_with?(entry) : site == entry }
        !@tables.empty? && finding[:normalized].to_s.scan(TABLES).any? { |(table)| @tables[table.downcase] }
      end

      # @param queries [Array<Query>] a request's queries, in order.
      # @param eager_loads [Sql::EagerLoads, nil] what the request loaded up front.
      # @return [Array<Hash>] {call_site:, normalized:, count:}, most repeated first, plus
      #   advice: when the statements loaded an association lazily (see {Query#advice}); then
      #   {kind: :unused_eager_loading, call_site:, count:, advice:} per association loaded up
      #   front and never read.
      def detect(queries, eager_loads = nil)
        unused = eager_loads ? eager_loads.unused.reject { |finding| safelisted?(finding) } : NONE
        return unused if queries.size < @threshold
        repeats(queries) + unused
      end

      # @param queries [Array<Query>] at least `threshold` of them.
      # @return [Array<Hash>] the N+1 findings, most repeated first.
      def repeats(queries)
        counts = Hash.new(0)
        advice = {}
        repeated_sites(queries).each do |query|
          key = query.fingerprint
          counts[key] += 1
          advice[key] ||= query.advice
        end
        found = counts.select { |_, count| count >= @threshold }
        found.map { |key, count| finding(key, count, advice[key]) }
             .reject { |finding| safelisted?(finding) }.sort_by { |finding| -finding[:count] }
      end

      # @param queries [Array<Query>]
      # @return [Array<Query>] the queries whose call site ran at least `threshold` of them (only
      #   those need normalising).
      def repeated_sites(queries)
        sites = queries.each_with_object(Hash.new(0)) { |query, tally| tally[query.call_site] += 1 }
        queries.select { |query| sites[query.call_site] >= @threshold }
      end

      # @param key [Array(String, String)] the call site and the normalised statement.
      # @param count [Integer] how many times it ran.
      # @param advice [String, nil] how to load its association up front.
      # @return [Hash] the finding.
      def finding((site, sql), count, advice)
        finding = { call_site: site, normalized: sql, count: count }
        advice ? finding.merge(advice: advice) : finding
      end

      # @param findings [Array<Hash>] what {#detect} returned (not empty).
      # @param limit [Integer] the longest value to return, in bytes.
      # @return [String] e.g. `2 queries x12 at app/users.rb:14 [User => [:roles]: add .eager(:roles)]
      #   (SELECT ...); x3 at ...; unused eager loading at app/posts.rb:3 [Post => [:tags]: remove
      #   .includes(:tags)]`, ASCII only.
      def header(findings, limit = HEADER_LIMIT)
        unused, repeats = findings.partition { |finding| unused?(finding) }
        parts = repeats.map { |finding| "x#{finding[:count]} at #{finding[:call_site]}#{advised(finding)} (#{finding[:normalized]})" }
        text = repeats.empty? ? "" : "#{repeats.size} #{repeats.size == 1 ? 'query' : 'queries'} #{parts.join('; ')}"
        text = [text, *unused.map { |finding| "unused eager loading at #{finding[:call_site]}#{advised(finding)}" }].reject(&:empty?).join("; ")
        text = text.encode("US-ASCII", invalid: :replace, undef: :replace, replace: "?").tr("\r\n\t", "   ")
        text.bytesize > limit ? "#{text.byteslice(0, limit - 3)}..." : text
      end

      # @param findings [Array<Hash>] what {#detect} returned (not empty).
      # @param where [String] the request, e.g. "GET /users".
      # @return [String] one warning line per finding.
      def message(findings, where)
        findings.map do |finding|
          next "heron: unused eager loading in #{where}: at #{finding[:call_site] || '(unknown)'}#{advised(finding)}\n" if unused?(finding)
          "heron: N+1 query in #{where}: #{finding[:count]}x at #{finding[:call_site] || '(unknown)'}" \
            "#{advised(finding)}: #{finding[:normalized]}\n"
        end.join
      end

      # @param finding [Hash] one of {#detect}'s findings.
      # @return [Boolean] whether it is unused eager loading (not an N+1).
      def unused?(finding)
        finding[:kind] == :unused_eager_loading
      end

      private

      # " [Users::User => [:roles]: add .eager(:roles)]" when the finding has advice.
      def advised(finding)
        finding[:advice] ? " [#{finding[:advice]}]" : ""
      end
    end
  end
end
