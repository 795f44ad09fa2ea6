# frozen_string_literal: true

module Heron
  module Profiler
    module Sql
      # Hooks the database libraries that are loaded: Sequel through {SequelHook}, ActiveRecord
      # through {ActiveRecordSubscriber} when ActiveSupport::Notifications is present, and the
      # lazy association loads of both ({SequelAssociationHook}, {ActiveRecordAssociationHook})
      # when their models are loaded. None is required by Heron; a library loaded later is
      # hooked on the next call.
      class Instrumentation
        # @param recorder [Recorder]
        def initialize(recorder)
          @recorder = recorder
          @sequel = @active_record = false
          @associations = { sequel: false, active_record: false }
        end

        # Installs whatever hooks can be installed and are not yet.
        # @return [Boolean] whether both are in place (nothing left to try).
        def install
          @sequel ||= defined?(::Sequel::Database) ? SequelHook.install : false
          @active_record ||= subscribe_active_record
          hook_associations
          @sequel && @active_record && @associations.values.all?
        end

        # @return [Boolean] whether the Sequel hook is installed.
        def sequel?
          @sequel
        end

        # @return [Boolean] whether the ActiveRecord subscriber is installed.
        def active_record?
          @active_record
        end

        # @return [Boolean] whether the association hook of the ORM (:sequel, :active_record) is installed.
        def associations?(orm)
          @associations.fetch(orm)
        end

        private

        def hook_associations
          @associations[:sequel] ||= defined?(::Sequel::Model::Associations::InstanceMethods) ? SequelAssociationHook.install : false
          @associations[:active_record] ||=
            defined?(::ActiveRecord::Associations::Association) ? ActiveRecordAssociationHook.install : false
        end

        def subscribe_active_record
          return false unless defined?(::ActiveSupport::Notifications)
          ActiveRecordSubscriber.subscribe(::ActiveSupport::Notifications, @recorder)
          true
        end
      end
    end
  end
end
