# frozen_string_literal: true

module Heron
  module Profiler
    module Sql
      # Prepended to `ActiveRecord::Associations::Association`: a lazy association read
      # (`user.employee`, `post.comments.to_a`) loads through `load_target`, so the queries it
      # runs for a profiled request are tagged with the owner's model and the association
      # ({AssociationLoad}). `includes`/`preload` do not come through here.
      module ActiveRecordAssociationHook
        # Installs the hook once.
        # @param association_class [Class] ActiveRecord::Associations::Association.
        # @return [Boolean] true.
        def self.install(association_class = ::ActiveRecord::Associations::Association)
          association_class.prepend(self) unless association_class.ancestors.include?(self)
          true
        end

        # ActiveRecord's loader, wrapped: tags the queries of a profiled request.
        # @return [Object] the association's target.
        def load_target(*args, &block)
          return super unless Profiler.recorder.recording? && !loaded?
          AssociationLoad.around(owner.class, reflection.name, :active_record) { super }
        end
      end
    end
  end
end
