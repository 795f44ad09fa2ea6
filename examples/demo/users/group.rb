# frozen_string_literal: true

require_relative "record"

module Demo
  module Users
    # A team; users join groups through group_assignments.
    class Group < Record
      # @return [Hash] the group as the API shows it.
      def as_json
        { id: id, title: title, description: description, archived: archived }
      end
    end
  end
end
