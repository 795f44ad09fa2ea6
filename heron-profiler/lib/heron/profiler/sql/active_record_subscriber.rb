# frozen_string_literal: true

module Heron
  module Profiler
    module Sql
      # Listens to ActiveRecord's `sql.active_record` notifications (ActiveSupport::Notifications
      # calls subscribers synchronously, in the fiber that ran the query, so the current request
      # and the application frame are still on hand). Schema and transaction bookkeeping
      # statements are left out.
      class ActiveRecordSubscriber
        EVENT = "sql.active_record"
        IGNORED = %w[SCHEMA TRANSACTION].freeze

        # Subscribes once.
        # @param notifications [#subscribe] ActiveSupport::Notifications or a stand-in.
        # @param recorder [Recorder]
        # @return [ActiveRecordSubscriber] the subscriber.
        def self.subscribe(notifications, recorder)
          subscriber = new(recorder)
          notifications.subscribe(EVENT, subscriber)
          subscriber
        end

        # @param recorder [Recorder] where queries go.
        def initialize(recorder)
          @recorder = recorder
        end

        # Called by ActiveSupport::Notifications after each statement.
        # @param _name [String] the event name.
        # @param start [Time, Float] when the statement started.
        # @param finish [Time, Float] when it finished.
        # @param _id [String] the event id.
        # @param payload [Hash] :sql, :name, :cached, ...
        # @return [Query, nil] the recorded query.
        def call(_name, start, finish, _id, payload)
          return nil if IGNORED.include?(payload[:name])
          @recorder.record(payload[:sql], (finish - start) * 1000.0, :active_record, skip: 1)
        end
      end
    end
  end
end
