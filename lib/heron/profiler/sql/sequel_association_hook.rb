# frozen_string_literal: true

module Heron
  module Profiler
    module Sql
      # Prepended to `Sequel::Model::Associations::InstanceMethods`: every lazy association read
      # (`user.roles`, `user.employee`) goes through `load_associated_objects`, so the queries
      # it runs for a profiled request are tagged with the model and association
      # ({AssociationLoad}). Eager loading (`Dataset#eager`) does not come through here.
      module SequelAssociationHook
        # Installs the hook once.
        # @param instance_methods [Module] Sequel::Model::Associations::InstanceMethods.
        # @return [Boolean] true.
        def self.install(instance_methods = ::Sequel::Model::Associations::InstanceMethods)
          instance_methods.prepend(self) unless instance_methods.ancestors.include?(self)
          true
        end

        private

        # Sequel's own (private) loader, wrapped: tags the queries of a profiled request.
        def load_associated_objects(opts, *rest, &block)
          return super unless Profiler.recorder.recording?
          AssociationLoad.around(opts[:model] || self.class, opts[:name], :sequel) { super }
        end
      end
    end
  end
end
