# frozen_string_literal: true

module Heron
  module Profiler
    # One SQL statement a request ran: the text, its shape, how long it took and where in the
    # application it came from.
    class Query
      # Longest SQL text a stored record keeps (see {#compact}).
      KEPT_SQL = 2048

      attr_reader :sql, :duration_ms, :call_site, :adapter
      # @return [Array<String>, nil] the application frames, innermost first (the call site
      #   first), when more than the call site is kept (`config.query_backtrace`).
      attr_reader :backtrace
      # @return [String, nil] when the statement loaded an association lazily, how to load it
      #   up front: "Users::User => [:roles]: add .eager(:roles)" (see {Sql::AssociationLoad}).
      attr_reader :advice

      # @param sql [String] the SQL as sent.
      # @param duration_ms [Float] wall time the statement took.
      # @param call_site [String, nil] "path:line" of the first application frame.
      # @param adapter [Symbol] :sequel or :active_record.
      # @param backtrace [Array<String>, nil] the application frames (see {#backtrace}).
      # @param advice [String, nil] see {#advice}.
      def initialize(sql, duration_ms, call_site, adapter, backtrace = nil, advice = nil)
        @sql = sql
        @duration_ms = duration_ms
        @call_site = call_site
        @adapter = adapter
        @backtrace = backtrace
        @advice = advice
      end

      # @return [String] the statement's shape (see {SqlNormalizer}), worked out on first use.
      def normalized
        @normalized ||= SqlNormalizer.normalize(@sql)
      end

      # Shortens a long statement once its request is over, so records in the store do not hold
      # on to huge texts (an eager load's `IN (1, 2, …, 1000)`): its shape is worked out from the
      # whole text first, then the text is cut to `limit` characters and marked as cut.
      # @param limit [Integer] characters to keep.
      # @return [self]
      def compact(limit = KEPT_SQL)
        return self if @sql.bytesize <= limit
        normalized
        @sql = "#{@sql[0, limit]}… (#{@sql.bytesize} bytes)"
        self
      end

      # @return [Array(String, String)] what N+1 detection groups by.
      def fingerprint
        [@call_site, normalized]
      end

      # @return [Hash] the store's form: sql, normalized, duration_ms, call_site, adapter, and
      #   backtrace and advice when there are.
      def to_h
        hash = { sql: @sql, normalized: normalized, duration_ms: @duration_ms, call_site: @call_site, adapter: @adapter }
        hash[:backtrace] = @backtrace if @backtrace
        hash[:advice] = @advice if @advice
        hash
      end
    end
  end
end
