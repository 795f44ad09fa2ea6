# frozen_string_literal: true

module Heron
  module Profiler
    # Turns a SQL string into its shape: literals (numbers, strings, bind markers such as `$1`)
    # become `?`, an IN list of them becomes `IN (?)`, and runs of white space become one space.
    # Two queries that differ only in their values normalise to the same string, which is what
    # N+1 detection groups by. Quoted identifiers (`"users2"`) are kept as written.
    class SqlNormalizer
      TOKEN = /("(?:[^"]|"")*")|'(?:[^']|'')*'|\$\d+|\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b/i
      IN_LIST = /\bIN\s*\(\s*\?(?:\s*,\s*\?)*\s*\)/i
      SPACE = /\s+/

      # @param sql [String] the SQL as sent to the database.
      # @return [String] the normalised SQL.
      def self.normalize(sql)
        shape = sql.gsub(TOKEN) { Regexp.last_match(1) || "?" }
        shape.gsub!(IN_LIST, "IN (?)")
        shape.gsub!(SPACE, " ")
        shape.strip!
        shape
      end
    end
  end
end
