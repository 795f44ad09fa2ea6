# frozen_string_literal: true

require_relative "rails_app"

# The Rails 7.1 API app that test/heron/pool_wait_test.rb and bench/rails_pool_burst.rb serve
# (issue 27), written by {RailsApp.write}: its config/database.yml is the one `rails new` writes
# (pool 5, checkout_timeout left at 5 s), and its controller holds a connection (`/hold`) or
# sleeps without the database (`/nap`). Rails itself comes from HERON_RAILS_GEM_HOME
# (bin/setup-rails); {RailsApp.env} is the environment its server runs with.
module RailsBurstApp
  ROUTES = 'get "/hold" => "posts#hold"; get "/nap" => "posts#nap"; get "/up" => "posts#up"; get "/pool" => "posts#pool"'
  APP = {
    "app/models/application_record.rb" => "class ApplicationRecord < ActiveRecord::Base\n  primary_abstract_class\nend\n",
    "app/models/post.rb" => "class Post < ApplicationRecord\nend\n",
    "app/controllers/posts_controller.rb" => <<~'RUBY',
      class PostsController < ActionController::API
        NAPPERS = { arrived: 0 }
        NAPPERS_LOCK = Mutex.new
        NAPPERS_ALL_IN = ConditionVariable.new
        TURNS = { given: 0 }
        TURNS_LOCK = Mutex.new

        # Holds a database connection for params[:seconds] (0.2 by default), as issue 27 does;
        # `turn` counts the requests that got a connection before this one, itself included.
        def hold
          connection = Post.connection
          turn = TURNS_LOCK.synchronize { TURNS[:given] += 1 }
          connection.select_value("SELECT 1")
          sleep Float(params.fetch(:seconds, 0.2))
          render json: JSON.generate(connection: connection.object_id, turn: turn)
        end

        # The pool's counts (no connection taken): busy, waiting, ...
        def pool
          render json: JSON.generate(Post.connection_pool.stat)
        end

        # Sleeps 1 s without the database, once params[:of] requests have arrived (or after 60 s):
        # `together` says how many were in the app at once. Waiting parks the fiber (no polling).
        def nap
          together = NAPPERS_LOCK.synchronize do
            NAPPERS[:arrived] += 1
            NAPPERS_ALL_IN.broadcast if NAPPERS[:arrived] >= Integer(params[:of])
            give_up = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 60
            until NAPPERS[:arrived] >= Integer(params[:of]) || (left = give_up - Process.clock_gettime(Process::CLOCK_MONOTONIC)) <= 0
              NAPPERS_ALL_IN.wait(NAPPERS_LOCK, left)
            end
            NAPPERS[:arrived]
          end
          sleep 1
          render json: JSON.generate(together: together)
        end

        # JSON.generate: ActiveSupport 7.1's encoder passes an option that json 3 no longer
        # takes, and the machine's newest json is what a bundle-less app gets.
        def up
          render json: JSON.generate(up: true)
        end
      end
    RUBY
  }.freeze

  # What `rails new app` (7.1) writes, `--database=postgresql` for the second; DATABASE_URL
  # points production at the test cluster, as on a PaaS.
  SQLITE_YML = <<~YAML
    default: &default
      adapter: sqlite3
      pool: <%= ENV.fetch("RAILS_MAX_THREADS") { 5 } %>
      timeout: 5000

    development:
      <<: *default
      database: db/development.sqlite3

    production:
      <<: *default
      database: db/production.sqlite3
  YAML
  POSTGRES_YML = <<~YAML
    default: &default
      adapter: postgresql
      encoding: unicode
      pool: <%= ENV.fetch("RAILS_MAX_THREADS") { 5 } %>

    development:
      <<: *default
      database: app_development

    production:
      <<: *default
      database: app_production
      username: app
      password: <%= ENV["APP_DATABASE_PASSWORD"] %>
  YAML

  module_function

  # Writes the app into `dir`.
  # @param dir [String]
  # @param database_yml [String] SQLITE_YML or POSTGRES_YML (or a variant).
  # @return [void]
  def write(dir, database_yml)
    RailsApp.write(dir, railties: %w[active_record action_controller], routes: ROUTES,
                        files: APP.merge("config/database.yml" => database_yml))
  end
end
