# frozen_string_literal: true

require_relative "../clock"

module Heron
  module Profiler
    module Sql
      # Prepended to `Sequel::Database`: every statement goes through `log_connection_yield`
      # (whatever the adapter, and whether or not loggers are set), so timing it there sees them
      # all. Outside a profiled request it only costs a hash lookup.
      module SequelHook
        # Installs the hook once.
        # @param database_class [Class] Sequel::Database.
        # @return [Boolean] true.
        def self.install(database_class = ::Sequel::Database)
          database_class.prepend(self) unless database_class.ancestors.include?(self)
          true
        end

        # Times the statement and records it for the current request.
        # @param sql [String] the statement.
        # @param conn [Object] the adapter's connection.
        # @param args [Object, nil] bound arguments.
        # @return [Object] what the statement returned.
        def log_connection_yield(sql, conn, args = nil)
          recorder = Profiler.recorder
          return super unless recorder.recording?
          started = Clock.now
          begin
            super
          ensure
            recorder.record(sql, Clock.ms_since(started), :sequel, skip: 1)
          end
        end
      end
    end
  end
end
