# frozen_string_literal: true

module Heron
  module Profiler
    module Sql
      # Prepended to `ActiveRecord::Associations::Association`: every lazy association read of
      # every kind (belongs_to, polymorphic or not, has_one, has_many, has_many :through,
      # has_and_belongs_to_many) queries through its private `find_target` (singular and
      # collection loaders both reach it: `CollectionAssociation#load_target` overrides
      # `Association#load_target` without `super`, so a hook there missed every collection), so
      # the queries it runs for a profiled request are tagged with the owner's model and the
      # association ({AssociationLoad}). `includes`/`preload` do not come through here; they are
      # watched by {ActiveRecordPreloadHook} and {ActiveRecordJoinHook}, reads by {ActiveRecordReaderHook}, counts by
      # {ActiveRecordCountHook} and {ActiveRecordProxyCountHook}.
      module ActiveRecordAssociationHook
        # Installs the hooks once.
        # @param associations [Module] ActiveRecord::Associations.
        # @return [Boolean] true.
        def self.install(associations = ::ActiveRecord::Associations)
          hook(associations::Association, self)
          hook(associations::HasManyAssociation, ActiveRecordCountHook)
          hook(associations::CollectionProxy, ActiveRecordProxyCountHook)
          hook(associations::SingularAssociation, ActiveRecordReaderHook)
          hook(associations::CollectionAssociation, ActiveRecordReaderHook)
          hook(associations::Preloader::Association, ActiveRecordPreloadHook)
          hook(associations::JoinDependency, ActiveRecordJoinHook)
          true
        end

        # Prepends a hook to a class unless it is there already.
        # @param klass [Class]
        # @param hook [Module]
        # @return [void]
        def self.hook(klass, hook)
          klass.prepend(hook) unless klass.ancestors.include?(hook)
        end

        private

        # ActiveRecord's (private) query for a target not loaded, wrapped: tags the queries of a
        # profiled request.
        def find_target(*args, &block)
          return super unless Profiler.recorder.recording?
          AssociationLoad.around(owner.class, reflection.name, :active_record) { super }
        end
      end
    end
  end
end
