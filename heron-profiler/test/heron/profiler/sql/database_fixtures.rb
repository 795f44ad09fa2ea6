# frozen_string_literal: true

require "sequel"
require "tmpdir"
require "support/postgres"

# The SQL tests run against both SQLite (a file in a temporary directory) and the throwaway
# PostgreSQL cluster, each holding three users with two posts apiece.
module DatabaseFixtures
  USERS = 3

  NAMES = %i[sqlite postgres].freeze

  # @param name [Symbol] :sqlite or :postgres
  # @return [Sequel::Database] that database, connected and seeded once per process, and only
  #   when first asked for (a test that needs SQLite alone starts no PostgreSQL; PostgreSQL
  #   hangs under the ASan run's preloaded runtime).
  def self.database(name)
    (@databases ||= {})[name] ||= open(name).tap { |db| seed(db) }
  end

  # @return [Hash{Symbol=>Sequel::Database}] both, connected once per process.
  def self.databases = NAMES.to_h { |name| [name, database(name)] }

  def self.open(name)
    return Sequel.connect(TestPostgres.url) if name == :postgres
    Sequel.sqlite(File.join(Dir.mktmpdir("heron-sqlite"), "test.db"))
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
