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

        # Sequel's own (private) loader, wrapped: tags the queries of a profiled request. A read
        # of an association already loaded runs no query and goes straight through: after
        # `Dataset#eager` that is every read (the demo's `/users?eager=1`: thousands a request,
        # each of which allocated an {AssociationLoad}, and an Array for a splat). Sequel's own
        # default for `dynamic_opts`, for versions whose callers may leave it out.
        def load_associated_objects(opts, dynamic_opts = ::Sequel::OPTS, &block)
          return super if cached_association?(opts, dynamic_opts, block) || !Profiler.recorder.recording?
          AssociationLoad.around(opts[:model] || self.class, opts[:name], :sequel) { super }
        end

        # Whether Sequel will answer from its association cache (as its loader decides: no
        # callback, no reload).
        def cached_association?(opts, dynamic_opts, block)
          block.nil? && !(dynamic_opts && (dynamic_opts[:callback] || dynamic_opts[:reload])) && associations.include?(opts[:name])
        end
      end
    end
  end
end
