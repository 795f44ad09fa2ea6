# frozen_string_literal: true

require_relative "record"

module Demo
  module Users
    # Joins a user to a role.
    class Assignment < Record
      many_to_one :user
      many_to_one :role
    end
  end
end
