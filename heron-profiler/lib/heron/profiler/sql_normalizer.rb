# frozen_string_literal: true

require_relative "sql_scanner"

module Heron
  module Profiler
    # Turns a SQL string into its shape: literals (numbers, strings, bind markers such as `$1`)
    # become `?`, an IN list of them becomes `IN (?)`, and runs of white space become one space.
    # Two queries that differ only in their values normalise to the same string, which is what
    # N+1 detection groups by. Quoted identifiers (`"users2"`) are kept as written.
    #
    # SQL without quotes of either kind (most ORM statements with integer keys) takes a quicker
    # road to the same shape: its IN lists of numbers collapse in one pass before literals are
    # replaced, and literals are replaced without a block. Only quotes can hide an `IN (` or a
    # number inside a token, so without them both roads give the same string.
    #
    # ASCII text, nearly every statement, takes neither: {SqlScanner}`.scan` (C,
    # ext/heron_profiler/profiler_sql_scanner.c) gives {.quoted}'s string in one walk over
    # the bytes. Through the regexps an eager load's `IN (1, 2, …, 1000)` cost about 2 million
    # instructions, most of what profiling added to a request running four of them.
    class SqlNormalizer
      # The lookaheads only say which character a token starts with, which lets the regexp
      # engine skip ahead to it instead of trying every position.
      NUMBER = /\$\d+|\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b/i # a number or a $n placeholder
      LITERAL = /(?=[$\d])#{NUMBER}/i
      ITEM = /#{NUMBER}|\?/i
      IN_ITEMS = /\bIN\s*\(\s*#{ITEM}(?:\s*,\s*#{ITEM})*\s*\)/i
      # A quoted identifier (group 1, kept), a string literal, an IN list of numbers and bind
      # markers (group 2, which becomes `IN (?)` in one match), or a number. Matching a whole IN
      # list at once matters: the block runs, and allocates, once per match, and an eager load's
      # `IN (1, 2, …, 1000)` would otherwise be a thousand matches (see {.normalize}).
      TOKEN = /(?=["'$\di])(?:("(?:[^"]|"")*")|'(?:[^']|'')*'|(#{IN_ITEMS})|#{NUMBER})/i
      IN_LIST = /\bIN\s*\(\s*\?(?:\s*,\s*\?)*\s*\)/i
      QUOTES = /["']/
      PLACEHOLDER = "?"
      IN_PLACEHOLDER = "IN (?)"
      SPACE = /\s{2,}|[^\S ]/ # a run of white space that is not already one space

      # @param sql [String] the SQL as sent to the database.
      # @return [String] the normalised SQL.
      def self.normalize(sql)
        shape = SqlScanner.scan(sql) || (QUOTES.match?(sql) ? quoted(sql) : unquoted(sql))
        shape.gsub!(IN_LIST, IN_PLACEHOLDER)
        shape.gsub!(SPACE, " ")
        shape.strip!
        shape
      end

      # @param sql [String] SQL with quotes in it.
      # @return [String] its literals replaced by `?` (quoted identifiers kept), IN lists of
      #   numbers and bind markers already `IN (?)`.
      def self.quoted(sql)
        sql.gsub(TOKEN) do
          match = Regexp.last_match
          match.begin(1) ? match[1] : (match.begin(2) ? IN_PLACEHOLDER : PLACEHOLDER)
        end
      end

      # @param sql [String] SQL with no `'` or `"` in it.
      # @return [String] its literals replaced by `?`, IN lists of numbers already `IN (?)`.
      def self.unquoted(sql)
        shape = sql.gsub(IN_ITEMS, IN_PLACEHOLDER)
        shape.gsub!(LITERAL, "?")
        shape
      end
    end
  end
end
