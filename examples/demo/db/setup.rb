# frozen_string_literal: true

# Creates the demo database (examples/demo/db/demo.sqlite3, or $HERON_DEMO_DB) and seeds it
# with 1,000 users (or $HERON_DEMO_USERS). Safe to run again: it does nothing when the data
# is already there.
#
#   bundle exec ruby examples/demo/db/setup.rb
require_relative "../users/database"
require_relative "../users/seeder"

started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
users = Integer(ENV.fetch("HERON_DEMO_USERS", "1000"))
seeded = Demo::Users::Seeder.new(Demo::Users::Database.connection, users: users).run
elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
puts format("demo db: %<path>s %<what>s %<users>d users (%<seconds>.2f s)",
            path: Demo::Users::Database.path, what: seeded ? "seeded with" : "already has", users: users,
            seconds: elapsed)
