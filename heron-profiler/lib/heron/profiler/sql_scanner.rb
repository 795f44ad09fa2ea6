# frozen_string_literal: true

require_relative "extension"

module Heron
  module Profiler
    # `SqlScanner.scan(sql)`: {SqlNormalizer}'s first pass over ASCII SQL (literals to `?`,
    # quoted identifiers kept, IN lists to `IN (?)`) in one walk over the bytes, or nil for
    # other text. The whole class is C (ext/heron_profiler/profiler_sql_scanner.c, where it is
    # documented).
    class SqlScanner
    end
  end
end
