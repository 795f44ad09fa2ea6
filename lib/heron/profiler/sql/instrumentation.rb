# frozen_string_literal: true

module Heron
  module Profiler
    module Sql
      # Hooks the database libraries that are loaded: Sequel through {SequelHook}, ActiveRecord
      # through {ActiveRecordSubscriber} when ActiveSupport::Notifications is present. Neither is
      # required by Heron; a library loaded later is hooked on the next call.
      class Instrumentation
        # @param recorder [Recorder]
        def initialize(recorder)
          @recorder = recorder
          @sequel = @active_record = false
        end

        # Installs whatever hooks can be installed and are not yet.
        # @return [Boolean] whether both are in place (nothing left to try).
        def install
          @sequel ||= defined?(::Sequel::Database) ? SequelHook.install : false
          @active_record ||= subscribe_active_record
          @sequel && @active_record
        end

        # @return [Boolean] whether the Sequel hook is installed.
        def sequel?
          @sequel
        end

        # @return [Boolean] whether the ActiveRecord subscriber is installed.
        def active_record?
          @active_record
        end

        private

        def subscribe_active_record
          return false unless defined?(::ActiveSupport::Notifications)
          ActiveRecordSubscriber.subscribe(::ActiveSupport::Notifications, @recorder)
          true
        end
      end
    end
  end
end
