# frozen_string_literal: true

require "sequel"
require "tmpdir"
require "support/postgres"

# The SQL tests run against both SQLite (a file in a temporary directory) and the throwaway
# PostgreSQL cluster, each holding three users with two posts apiece.
module DatabaseFixtures
  USERS = 3

  # @return [Hash{Symbol=>Sequel::Database}] :sqlite and :postgres, connected once per process.
  def self.databases
    @databases ||= { sqlite: Sequel.sqlite(File.join(Dir.mktmpdir("heron-sqlite"), "test.db")),
                     postgres: Sequel.connect(TestPostgres.url) }.each_value { |db| seed(db) }
  end

  # Creates and fills the users and posts tables.
  # @param db [Sequel::Database]
  def self.seed(db)
    db.create_table!(:posts) { primary_key :id; Integer :user_id; String :title }
    db.create_table!(:users) { primary_key :id; String :name }
    USERS.times do |i|
      user = db[:users].insert(name: "user #{i}")
      2.times { |j| db[:posts].insert(user_id: user, title: "post #{j}") }
    end
  end

  # @yieldparam db [Sequel::Database]
  # @yieldparam name [Symbol] :sqlite or :postgres
  def each_database(&block)
    DatabaseFixtures.databases.each { |name, db| block.call(db, name) }
  end

  # Runs the classic N+1: one query for the users, then one per user for their posts.
  # @return [Integer] how many posts were loaded.
  def load_posts_one_by_one(db)
    db[:users].all.sum { |user| db[:posts].where(user_id: user[:id]).all.size }
  end
end
