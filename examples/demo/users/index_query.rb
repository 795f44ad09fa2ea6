# frozen_string_literal: true

require_relative "database"

module Demo
  module Users
    # The index's users as plain hashes, read with five queries of only the columns the index
    # shows and no model objects (step 3 of seed 004's walk): the same JSON objects as
    # {UserSerializer}, for a fraction of the allocations.
    class IndexQuery
      # @param db [Sequel::Database]
      # @param user_ids [Sequel::Dataset, nil] the ids of the users to list (all when nil).
      def initialize(db, user_ids = nil)
        @db = db
        @user_ids = user_ids
      end

      # @return [Array<Hash>] the users' JSON objects, by id.
      def all
        roles = memberships(:assignments, :roles, :role_id, %i[id title description])
        groups = memberships(:group_assignments, :groups, :group_id, %i[id title description archived])
        employees = scoped(@db[:employees], :user_id).select_hash(:user_id, :id)
        logins = last_logins
        users.map do |user|
          id = user[:id]
          user.merge(employee_id: employees[id], last_login_at: logins[id]&.utc&.iso8601,
                     roles: roles.fetch(id, []), groups: groups.fetch(id, []))
        end
      end

      private

      def users
        scoped(@db[:users], :id).order(:id).select(:id, :email, :first_name, :last_name).all
      end

      # {user id => [row, ...]} of a many-to-many through a join table, rows ordered by id.
      def memberships(join, table, key, columns)
        rows = scoped(@db[join], :user_id).join(table, id: key).order(Sequel[table][:id])
        rows = rows.select(Sequel[join][:user_id], *columns.map { |column| Sequel[table][column] })
        rows.all.group_by { |row| row.delete(:user_id) }
      end

      # {user id => last_used_at} of each user's newest own (not on-behalf) token.
      def last_logins
        newest = scoped(@db[:authentication_tokens].where(on_behalf: false), :user_id).group(:user_id).select { max(id) }
        @db[:authentication_tokens].where(id: newest).select_hash(:user_id, :last_used_at)
      end

      def scoped(dataset, column)
        @user_ids ? dataset.where(column => @user_ids) : dataset
      end
    end
  end
end
