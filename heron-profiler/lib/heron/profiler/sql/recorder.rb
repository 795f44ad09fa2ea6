# frozen_string_literal: true

module Heron
  module Profiler
    module Sql
      # Records one finished statement into the profile of the request the current fiber works
      # for; statements run outside a profiled request are ignored.
      class Recorder
        # @return [Integer] application frames kept per query (1: the call site only).
        attr_reader :frames

        # @param accounting [FiberAccounting] where to look up the current profile.
        # @param call_site [CallSite] how to find the application frames.
        # @param frames [Integer] application frames to keep per query (at least 1: the call site).
        def initialize(accounting, call_site = CallSite.new, frames: 1)
          @accounting = accounting
          @call_site = call_site
          @frames = [frames.to_i, 1].max
        end

        # Applies `config.query_backtrace` (frames per query) and `config.query_backtrace_exclude`
        # (more path prefixes that are not application code).
        # @param config [Heron::Configuration]
        # @return [self]
        def configure(config)
          @frames = [config.query_backtrace.to_i, 1].max
          @call_site = CallSite.new(CallSite.library_prefixes + config.query_backtrace_exclude.map { |dir| File.expand_path(dir) })
          self
        end

        # @return [Boolean] whether the current fiber is in a profiled request.
        def recording?
          !@accounting.current.nil?
        end

        # @param skip [Integer] stack frames above the caller to skip.
        # @return [String, nil] "path:line" of the first application frame on the stack.
        def site(skip = 1)
          @call_site.find(skip + 1)
        end

        # A statement run while an ORM loads an association lazily ({AssociationLoad}) carries
        # the advice for it.
        # @param sql [String] the statement.
        # @param duration_ms [Float] how long it took.
        # @param adapter [Symbol] :sequel or :active_record.
        # @param skip [Integer] stack frames between the caller and the application to skip first.
        # @return [Query, nil] the recorded query, nil when no request is profiled.
        def record(sql, duration_ms, adapter, skip: 2)
          profile = @accounting.current or return nil
          frames = @call_site.frames(skip + 1, @frames)
          query = Query.new(sql.to_s, duration_ms, frames.first, adapter, frames.size > 1 ? frames : nil,
                            AssociationLoad.current&.advice)
          profile.add_query(query, query.duration_ms)
          query
        end
      end
    end
  end
end
