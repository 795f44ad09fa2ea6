# frozen_string_literal: true

module Heron
  module Profiler
    module Sql
      # Prepended to `ActiveRecord::Associations::SingularAssociation` and
      # `CollectionAssociation`: a read of an association already loaded (`post.comments` after
      # `includes(:comments)`, whatever is called on it next, `.size` included) marks that eager
      # load used ({EagerLoads}); reads of associations not loaded mark nothing.
      module ActiveRecordReaderHook
        # The association's reader (`post.author`, `post.comments`), noted when loaded.
        # @return [Object] the target, or the collection proxy.
        def reader
          loads = EagerLoads.unread if loaded?
          loads&.read(reflection.active_record, reflection.name)
          super
        end
      end
    end
  end
end
