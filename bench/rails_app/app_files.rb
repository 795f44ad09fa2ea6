# frozen_string_literal: true

require "fileutils"

module RailsApp
  # The files of the Rails 7.1 API app bench/rails.rb serves: what `rails new --api -d postgresql`
  # generates where it matters (database.yml's pool from RAILS_MAX_THREADS, default
  # checkout_timeout, production with eager loading and no reloading), plus three actions, a seed script and
  # Falcon's falcon.rb.
  module AppFiles
    FILES = {
      "config/application.rb" => <<~'RUBY',
        require "rails"
        require "active_record/railtie"
        require "action_controller/railtie"
        require "heron" # what Bundler.require does with `gem "heron"` in the Gemfile
        module BenchApp
          class Application < Rails::Application
            config.load_defaults 7.1
            config.api_only = true
            config.root = File.expand_path("..", __dir__)
            config.eager_load = Rails.env.production?
            # What the generated config/environments/production.rb sets: without it Rails checks
            # the app's files for changes (a Dir glob and mtimes) on every request.
            config.enable_reloading = !Rails.env.production?
            config.secret_key_base = "x" * 64
            config.hosts.clear
            config.log_level = :warn
            config.logger = ActiveSupport::Logger.new(File.expand_path("../log/rails.log", __dir__))
            # Falcon's advice for Rails; Heron's Railtie sets it by itself.
            config.active_support.isolation_level = :fiber if ENV["RAILS_FIBER_ISOLATION"]
            routes.append do
              get "/sleep" => "bench#sleep"
              get "/db" => "bench#db"
              get "/posts" => "posts#index"
            end
          end
        end
      RUBY
      "config/environment.rb" => %(require_relative "application"\nRails.application.initialize!\n),
      "config/database.yml" => <<~YAML,
        default: &default
          adapter: postgresql
          encoding: unicode
          pool: <%= ENV.fetch("RAILS_MAX_THREADS") { 5 } %>
        production:
          <<: *default
          url: <%= ENV["DATABASE_URL"] %>
      YAML
      # Falcon's production launcher (`falcon host`, as its Rails guide advises over `falcon serve`):
      # one process (WEB_CONCURRENCY, as the guide's example), HTTP/1.1 on the bench's port.
      "falcon.rb" => <<~'RUBY',
        #!/usr/bin/env -S falcon host
        require "falcon/environment/rack"

        service "bench" do
          include Falcon::Environment::Rack
          count ENV.fetch("WEB_CONCURRENCY", 1).to_i
          endpoint Async::HTTP::Endpoint.parse("http://127.0.0.1:#{ENV.fetch('PORT', 3000)}").with(protocol: Async::HTTP::Protocol::HTTP11)
        end
      RUBY
      "config.ru" => %(require_relative "config/environment"\nrun Rails.application\nRails.application.load_server\n),
      "app/models/application_record.rb" => "class ApplicationRecord < ActiveRecord::Base\n  primary_abstract_class\nend\n",
      "app/models/post.rb" => "class Post < ApplicationRecord\nend\n",
      "app/controllers/bench_controller.rb" => <<~'RUBY',
        class BenchController < ActionController::API
          def sleep
            Kernel.sleep(params.fetch(:ms, 1000).to_i / 1000.0)
            render plain: "ok"
          end

          def db
            ActiveRecord::Base.connection.select_value("SELECT pg_sleep(0.05)")
            render plain: "ok"
          end
        end
      RUBY
      "app/controllers/posts_controller.rb" => <<~'RUBY',
        class PostsController < ActionController::API
          # JSON.generate, not `render json:`: ActiveSupport 7.1's encoder passes an option json 3
          # no longer takes, and a bundle-less app gets the machine's newest json.
          def index
            render body: JSON.generate(Post.order(:id).limit(20).map(&:as_json)), content_type: "application/json"
          end
        end
      RUBY
      "db/seed.rb" => <<~'RUBY',
        require_relative "../config/environment"
        ActiveRecord::Schema.define do
          create_table :posts, force: true do |t|
            t.string :title
            t.text :body
            t.integer :views
            t.timestamps
          end
        end
        now = Time.now
        Post.insert_all(Array.new(20) { |i| { title: "Post #{i}", body: "Body of post #{i}. " * 10, views: i * 7, created_at: now, updated_at: now } })
      RUBY
    }.freeze

    module_function

    # Writes the app into `dir`.
    # @return [String] `dir`.
    def write(dir)
      FILES.each do |path, text|
        FileUtils.mkdir_p(File.dirname(File.join(dir, path)))
        File.write(File.join(dir, path), text)
      end
      %w[tmp log].each { |sub| FileUtils.mkdir_p(File.join(dir, sub)) }
      dir
    end
  end
end
