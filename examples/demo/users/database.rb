# frozen_string_literal: true

require "sequel"
require_relative "schema"

module Demo
  module Users
    # The demo's SQLite database: examples/demo/db/demo.sqlite3, or the file named by
    # HERON_DEMO_DB. Opening it creates the tables when they are missing (seeding is
    # examples/demo/db/setup.rb's job).
    class Database
      DEFAULT_PATH = File.expand_path("../db/demo.sqlite3", __dir__)

      # @return [String] the database file this process uses.
      def self.path
        ENV.fetch("HERON_DEMO_DB", DEFAULT_PATH)
      end

      # @return [Sequel::Database] the process's connection, opened (and the schema created) on first use.
      def self.connection
        @connection ||= open(path)
      end

      # @param path [String] a SQLite file.
      # @return [Sequel::Database] a new connection with the schema in place.
      def self.open(path)
        db = Sequel.sqlite(path)
        Schema.new(db).create
        db
      end
    end
  end
end
