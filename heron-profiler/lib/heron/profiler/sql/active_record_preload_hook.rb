# frozen_string_literal: true

module Heron
  module Profiler
    module Sql
      # Prepended to `ActiveRecord::Associations::Preloader::Association`: each association an
      # application preloads (`includes`, `preload`, nested ones too) is noted for the request
      # with its owners and where it ran ({EagerLoads}), so one never read is reported as
      # unused eager loading. The preloads Rails makes for itself (the middle of a
      # has_many :through, which carry a scope of their own) are left out.
      module ActiveRecordPreloadHook
        # ActiveRecord's preload of one association for a group of owners, noted first.
        # @return [self]
        def run(*args, &block)
          if !run? && @associate && @preload_scope.nil? && !owners.empty? && Profiler.recorder.recording?
            EagerLoads.preloaded(reflection.active_record, reflection.name, owners.size, :includes)
          end
          super
        end
      end
    end
  end
end
