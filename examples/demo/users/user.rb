# frozen_string_literal: true

require_relative "record"
require_relative "role"
require_relative "group"
require_relative "assignment"
require_relative "group_assignment"
require_relative "employee"
require_relative "authentication_token"

module Demo
  module Users
    # A person who can log in. Every association below costs one query per user when read
    # lazily, and one query for all users when eager-loaded (see {EAGER}).
    class User < Record
      one_to_many :assignments, class: "Demo::Users::Assignment"
      many_to_many :roles, class: "Demo::Users::Role", join_table: :assignments, order: :id
      one_to_many :group_assignments, class: "Demo::Users::GroupAssignment"
      many_to_many :groups, class: "Demo::Users::Group", join_table: :group_assignments, order: :id
      one_to_one :employee, class: "Demo::Users::Employee"
      one_to_many :authentication_tokens, class: "Demo::Users::AuthenticationToken"
      # The newest token the user used themselves (seed 004's last_login_authentication_token).
      one_to_one :last_login_token, class: "Demo::Users::AuthenticationToken",
                                    conditions: { on_behalf: false }, order: Sequel.desc(:id),
                                    eager_limit_strategy: :window_function

      # What an index page reads, for Dataset#eager.
      EAGER = %i[roles groups employee last_login_token].freeze

      dataset_module do
        # @param titles [Array<String>] role titles.
        # @return [Sequel::Dataset] users holding any of those roles.
        def with_roles(titles)
          holders = db[:assignments].join(:roles, id: :role_id).where(Sequel[:roles][:title] => titles)
          where(id: holders.select(:user_id))
        end
      end

      # @return [Time, nil] when the user last used one of their own tokens.
      def last_login_at
        last_login_token&.last_used_at
      end

      # @return [Integer, nil] the employee record's id, when the user is staff.
      def employee_id
        employee&.id
      end
    end
  end
end
