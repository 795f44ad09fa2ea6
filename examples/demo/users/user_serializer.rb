# frozen_string_literal: true

require_relative "user"

module Demo
  module Users
    # Turns users into the /users API's JSON objects: attributes, employee id, last login, roles
    # and groups. It reads associations as they come, so it issues four queries per user unless
    # the users were loaded with `eager(*User::EAGER)`.
    class UserSerializer
      # @param user [User]
      def initialize(user)
        @user = user
      end

      # @return [Hash] the user's JSON object.
      def as_json
        { id: @user.id, email: @user.email, first_name: @user.first_name, last_name: @user.last_name,
          employee_id: @user.employee_id, last_login_at: @user.last_login_at&.utc&.iso8601,
          roles: @user.roles.map(&:as_json), groups: @user.groups.map(&:as_json) }
      end
    end
  end
end
