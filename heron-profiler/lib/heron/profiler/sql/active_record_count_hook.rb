# frozen_string_literal: true

module Heron
  module Profiler
    module Sql
      # Prepended to `ActiveRecord::Associations::HasManyAssociation`: `post.comments.size` on a
      # collection not loaded runs `SELECT COUNT(*)` through `count_records`; in a loop that is
      # an N+1 whose cure is a counter cache, not `includes`, so its queries are advised with one
      # (Bullet's "Need Counter Cache"). An association that has a counter cache runs no query.
      module ActiveRecordCountHook
        # @param model [Class] the owner's model.
        # @param reflection [ActiveRecord::Reflection::AssociationReflection] the has_many.
        # @return [String] "add a counter cache (posts.comments_count)".
        def self.remedy(model, reflection)
          "add a counter cache (#{model.table_name}.#{reflection.name}_count)"
        end

        private

        # ActiveRecord's (private) count of a collection not loaded, wrapped.
        def count_records(*args, &block)
          return super if !Profiler.recorder.recording? || reflection.has_cached_counter?
          AssociationLoad.around(owner.class, reflection.name, :active_record, ActiveRecordCountHook.remedy(owner.class, reflection)) { super }
        end
      end
    end
  end
end
