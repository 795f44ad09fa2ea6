# frozen_string_literal: true

require_relative "record"

module Demo
  module Users
    # Joins a user to a group.
    class GroupAssignment < Record
      many_to_one :user
      many_to_one :group
    end
  end
end
