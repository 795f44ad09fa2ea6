# frozen_string_literal: true

module Heron
  module Profiler
    module Sql
      # Prepended to `Sequel::Model::Associations::InstanceMethods`: every lazy association load
      # (`user.roles`, `user.employee` not cached yet) goes through `_load_associated_objects`,
      # so the queries it runs for a profiled request are tagged with the model and association
      # ({AssociationLoad}). Eager loading (`Dataset#eager`) does not come through here; it is
      # noted by {SequelEagerHook}, and every read of an association (`load_associated_objects`,
      # cached or not) marks an eager load used ({EagerLoads#read}) without allocating: after
      # `Dataset#eager` the demo's `/users?eager=1` read thousands a request. Sequel's own
      # sql_comments and forbid_lazy_load plugins hook the same methods.
      module SequelAssociationHook
        # Installs the hooks once: this one, and {SequelEagerHook} on the datasets.
        # @param associations [Module] Sequel::Model::Associations.
        # @return [Boolean] true.
        def self.install(associations = ::Sequel::Model::Associations)
          { associations::InstanceMethods => self, associations::DatasetMethods => SequelEagerHook }.each do |target, hook|
            target.prepend(hook) unless target.ancestors.include?(hook)
          end
          true
        end

        private

        # Sequel's own (private) reader of an association, cached or not: notes the read.
        def load_associated_objects(opts, dynamic_opts, &block)
          EagerLoads.unread&.read(opts[:model], opts[:name])
          super
        end

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
