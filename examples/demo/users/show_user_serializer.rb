# frozen_string_literal: true

require_relative "user_serializer"

module Demo
  module Users
    # The user as the show page wants it (seed 004's one serializer for everything): what
    # {UserSerializer} gives, plus the assignments, group assignments and every authentication
    # token. Used for the index, it reads seven associations per user (step 1 of the walk,
    # lazily; step 2, all eager-loaded in one JOIN).
    class ShowUserSerializer
      # @param user [User]
      def initialize(user)
        @user = user
      end

      # @return [Hash] the user's JSON object, with its join rows and tokens.
      def as_json
        UserSerializer.new(@user).as_json.merge(
          assignments: @user.assignments.map { |row| { id: row.id, role_id: row.role_id } },
          group_assignments: @user.group_assignments.map { |row| { id: row.id, group_id: row.group_id } },
          authentication_tokens: @user.authentication_tokens.map { |token| token_json(token) }
        )
      end

      private

      def token_json(token)
        { id: token.id, on_behalf: token.on_behalf, last_used_at: token.last_used_at&.utc&.iso8601 }
      end
    end
  end
end
