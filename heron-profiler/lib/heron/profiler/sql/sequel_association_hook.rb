# frozen_string_literal: true

module Heron
  module Profiler
    module Sql
      # Prepended to `Sequel::Model::Associations::InstanceMethods`: every lazy association load
      # (`user.roles`, `user.employee` not cached yet) goes through `_load_associated_objects`,
      # so the queries it runs for a profiled request are tagged with the model and association
      # ({AssociationLoad}). Eager loading (`Dataset#eager`) does not come through here, nor does
      # a read of an association already loaded: Sequel's `load_associated_objects` answers
      # those from its cache (after `Dataset#eager`, every read: the demo's `/users?eager=1`
      # read thousands a request, and hooking there cost an {AssociationLoad} and a splat
      # Array each). Sequel's own sql_comments and forbid_lazy_load plugins hook the same method.
      module SequelAssociationHook
        # Installs the hook once.
        # @param instance_methods [Module] Sequel::Model::Associations::InstanceMethods.
        # @return [Boolean] true.
        def self.install(instance_methods = ::Sequel::Model::Associations::InstanceMethods)
          instance_methods.prepend(self) unless instance_methods.ancestors.include?(self)
          true
        end

        private

        # Sequel's own (private) loader of an association not cached, wrapped: tags the queries
        # of a profiled request.
        def _load_associated_objects(opts, dynamic_opts = ::Sequel::OPTS)
          return super unless Profiler.recorder.recording?
          AssociationLoad.around(opts[:model] || self.class, opts[:name], :sequel) { super }
        end
      end
    end
  end
end
