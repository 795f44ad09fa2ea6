# frozen_string_literal: true

module Heron
  module Profiler
    module Sql
      # Prepended to `ActiveRecord::Associations::JoinDependency`: an association loaded up front
      # in the same query (`eager_load`, or `includes` once a `where`/`references` names its
      # table) is noted for the request like a preload ({EagerLoads}), nested ones too, so one
      # never read is reported as unused eager loading.
      module ActiveRecordJoinHook
        # ActiveRecord's builder of the records and their joined associations, noted after.
        # @return [Array<ActiveRecord::Base>] the records.
        def instantiate(*args, &block)
          records = super
          heron_note(join_root, records.size) if !records.empty? && Profiler.recorder.recording?
          records
        end

        private

        # Notes each joined association under a node (owners: the records at the root).
        def heron_note(node, owners)
          node.children.each do |child|
            EagerLoads.preloaded(child.reflection.active_record, child.reflection.name, owners, :includes)
            heron_note(child, owners)
          end
        end
      end
    end
  end
end
