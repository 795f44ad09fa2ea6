# frozen_string_literal: true

require_relative "record"

module Demo
  module Users
    # A role such as "admin"; users get roles through assignments.
    class Role < Record
      # @return [Hash] the role as the API shows it.
      def as_json
        { id: id, title: title, description: description }
      end
    end
  end
end
