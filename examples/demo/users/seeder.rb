# frozen_string_literal: true

module Demo
  module Users
    # Fills the demo tables with deterministic data: a fixed set of roles and groups, then
    # `users` users with one to three roles, one or two groups, usually an employee record and
    # up to four authentication tokens. Idempotent: when the database already holds exactly that
    # many users it does nothing; otherwise it empties the tables and seeds them again.
    class Seeder
      ROLES = { "admin" => "Everything", "manager" => "Approves and assigns", "editor" => "Writes content",
                "viewer" => "Reads content", "billing" => "Invoices and payments", "support" => "Answers customers" }.freeze
      GROUPS = %w[Engineering Design Sales Marketing Finance Legal Operations Research Support Security Data People].freeze
      FIRST = %w[Ada Grace Alan Edsger Barbara Donald Frances Ken Margaret Dennis Radia Leslie].freeze
      LAST = %w[Lovelace Hopper Turing Dijkstra Liskov Knuth Allen Thompson Hamilton Ritchie Perlman Lamport].freeze
      TABLES = %i[authentication_tokens assignments group_assignments employees users roles groups].freeze

      # @param db [Sequel::Database] a database with {Schema} in place.
      # @param users [Integer] how many users to create.
      # @param seed [Integer] the random seed, so every run makes the same data.
      def initialize(db, users: 1000, seed: 4)
        @db = db
        @users = users
        @random = Random.new(seed)
        @now = Time.utc(2026, 1, 1)
      end

      # @return [Boolean] true when it seeded, false when the data was already there.
      def run
        return false if @db[:users].count == @users
        @db.transaction do
          TABLES.each { |table| @db[table].delete }
          catalog
          people
        end
        true
      end

      private

      def catalog
        @db[:roles].import(%i[title description], ROLES.to_a)
        @db[:groups].import(%i[title description archived], GROUPS.map { |title| [title, "The #{title} team", title == "Legal"] })
      end

      def people
        role_ids = @db[:roles].select_map(:id)
        group_ids = @db[:groups].select_map(:id)
        rows = Hash.new { |hash, key| hash[key] = [] }
        (1..@users).each { |id| person(id, role_ids, group_ids, rows) }
        @db[:users].import(%i[id email first_name last_name], rows[:users])
        insert_related(rows)
      end

      def person(id, role_ids, group_ids, rows)
        rows[:users] << [id, "user#{id}@example.com", FIRST[id % FIRST.size], LAST[(id / FIRST.size) % LAST.size]]
        role_ids.sample(1 + @random.rand(3), random: @random).each { |role| rows[:assignments] << [id, role] }
        group_ids.sample(1 + @random.rand(2), random: @random).each { |group| rows[:group_assignments] << [id, group] }
        rows[:employees] << [id, format("E%05d", id)] if @random.rand < 0.8
        @random.rand(5).times { rows[:authentication_tokens] << token(id) }
      end

      def token(user_id)
        [user_id, format("%032x", @random.rand(2**128)), @random.rand < 0.2, @now - @random.rand(90 * 86_400)]
      end

      def insert_related(rows)
        @db[:assignments].import(%i[user_id role_id], rows[:assignments])
        @db[:group_assignments].import(%i[user_id group_id], rows[:group_assignments])
        @db[:employees].import(%i[user_id number], rows[:employees])
        @db[:authentication_tokens].import(%i[user_id token on_behalf last_used_at], rows[:authentication_tokens])
      end
    end
  end
end
