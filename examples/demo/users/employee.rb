# frozen_string_literal: true

require_relative "record"

module Demo
  module Users
    # The HR record of a user who is staff (most are).
    class Employee < Record
      many_to_one :user
    end
  end
end
