# frozen_string_literal: true

module Demo
  module Users
    # The tables of seed 004's data model: users with roles (through assignments), groups
    # (through group_assignments), one employee record each, and authentication tokens.
    class Schema
      # @param db [Sequel::Database]
      def initialize(db)
        @db = db
      end

      # Creates every missing table and index; leaves existing ones alone.
      # @return [void]
      def create
        people
        memberships
        tokens
      end

      private

      def people
        @db.create_table?(:users) do
          primary_key :id
          String :email, null: false, unique: true
          String :first_name, null: false
          String :last_name, null: false
        end
        @db.create_table?(:employees) do
          primary_key :id
          foreign_key :user_id, :users, null: false, unique: true
          String :number, null: false
        end
      end

      def memberships
        @db.create_table?(:roles) { primary_key :id; String :title, null: false, unique: true; String :description }
        @db.create_table?(:groups) do
          primary_key :id
          String :title, null: false
          String :description
          TrueClass :archived, null: false, default: false
        end
        join_table(:assignments, :role_id, :roles)
        join_table(:group_assignments, :group_id, :groups)
      end

      def join_table(name, column, target)
        @db.create_table?(name) do
          primary_key :id
          foreign_key :user_id, :users, null: false, index: true
          foreign_key column, target, null: false, index: true
        end
      end

      def tokens
        @db.create_table?(:authentication_tokens) do
          primary_key :id
          foreign_key :user_id, :users, null: false, index: true
          String :token, null: false
          TrueClass :on_behalf, null: false, default: false
          Time :last_used_at
        end
      end
    end
  end
end
