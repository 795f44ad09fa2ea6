# frozen_string_literal: true

module Heron
  module Profiler
    module Sql
      # Prepended to `ActiveRecord::Associations::CollectionProxy`: `post.comments.count` always
      # runs `SELECT COUNT(*)`, loaded or not; in a loop its queries are advised with a counter
      # cache, or, when the collection is loaded already, with `.size`, which counts what is loaded.
      module ActiveRecordProxyCountHook
        # The collection's count, its queries advised in a profiled request.
        # @return [Integer, Hash] what ActiveRecord's count returns.
        def count(*args, &block)
          return super if block || !Profiler.recorder.recording?
          AssociationLoad.around(proxy_association.owner.class, proxy_association.reflection.name, :active_record, heron_count_remedy) { super }
        end

        private

        def heron_count_remedy
          association = proxy_association
          return "use .size (the collection is loaded: .count queries again)" if association.loaded?
          ActiveRecordCountHook.remedy(association.owner.class, association.reflection)
        end
      end
    end
  end
end
