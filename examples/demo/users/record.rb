# frozen_string_literal: true

require_relative "database"

module Demo
  module Users
    # The demo models' base class: Sequel models bound to {Database.connection}, each reading
    # its table name from its class name (User → users). Made with Class.new so that Sequel,
    # which names a model's table after its class, does not look for a `records` table.
    Record = Class.new(Sequel::Model(Database.connection))
  end
end
