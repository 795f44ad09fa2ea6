# frozen_string_literal: true

module Heron
  module Profiler
    module Sql
      # Records one finished statement into the profile of the request the current fiber works
      # for; statements run outside a profiled request are ignored.
      class Recorder
        # @param accounting [FiberAccounting] where to look up the current profile.
        # @param call_site [CallSite] how to find the application frame.
        def initialize(accounting, call_site = CallSite.new)
          @accounting = accounting
          @call_site = call_site
        end

        # @return [Boolean] whether the current fiber is in a profiled request.
        def recording?
          !@accounting.current.nil?
        end

        # @param sql [String] the statement.
        # @param duration_ms [Float] how long it took.
        # @param adapter [Symbol] :sequel or :active_record.
        # @param skip [Integer] stack frames between the caller and the application to skip first.
        # @return [Query, nil] the recorded query, nil when no request is profiled.
        def record(sql, duration_ms, adapter, skip: 2)
          profile = @accounting.current or return nil
          query = Query.new(sql.to_s, duration_ms, @call_site.find(skip), adapter)
          profile.add_query(query)
          query
        end
      end
    end
  end
end
