# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "json"
require_relative "../support/install_helper"
require_relative "../support/postgres"
require_relative "../support/rails_app"

# A real Rails 7.1 API app with ActiveRecord, started with `heron` (Rails is not in the bundle:
# bin/setup-rails installs it into tmp/rails-gems and bin/test points HERON_RAILS_GEM_HOME at it).
# With a pool of 5, 200 concurrent requests that each hold a connection for 50 ms all answer 200
# (they wait for a connection; none fails), and ActiveSupport::CurrentAttributes set by one request
# is never seen by another. On SQLite in development (where touching tmp/restart.txt restarts the
# server) and on PostgreSQL in production.
class RailtieTest < Minitest::Test
  include InstallHelper

  REQUESTS = 200
  ROUTES = 'get "/hold/:id" => "holds#show"; get "/boot" => "holds#boot"'

  APP = {
    "config/initializers/boot_id.rb" => 'BOOT_ID = "#{Process.pid}-#{Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)}"',
    "config/database.yml" => <<~YAML,
      development:
        adapter: sqlite3
        database: db/development.sqlite3
        pool: 5
        checkout_timeout: 60
      production:
        url: <%= ENV["DATABASE_URL"] %>
        pool: 5
        checkout_timeout: 60
    YAML
    "app/models/current.rb" => "class Current < ActiveSupport::CurrentAttributes\n  attribute :request_id\nend\n",
    "app/controllers/holds_controller.rb" => <<~'RUBY',
      class HoldsController < ActionController::API
        # Sets Current, holds a database connection for 50 ms, then reports what it saw.
        def show
          before = Current.request_id
          Current.request_id = params[:id]
          connection = ActiveRecord::Base.connection
          if connection.adapter_name.match?(/postg/i)
            connection.select_value("SELECT pg_sleep(0.05)")
          else
            connection.select_value("SELECT 1")
            sleep 0.05
          end
          reply(id: params[:id], before: before, after: Current.request_id, connection: connection.object_id,
                isolation: ActiveSupport::IsolatedExecutionState.isolation_level.to_s)
        end

        def boot
          reply(boot: BOOT_ID)
        end

        private

        # JSON.generate, not `render json:`: ActiveSupport 7.1's encoder passes an option that
        # json 3 no longer takes, and the machine's newest json is what a bundle-less app gets.
        def reply(hash)
          render body: JSON.generate(hash), content_type: "application/json"
        end
      end
    RUBY
  }.freeze

  def setup
    @gem_home = ENV["HERON_RAILS_GEM_HOME"] or skip "Rails is not installed (bin/setup-rails installs it; bin/test runs it)"
  end

  def test_sqlite_in_development_holds_200_requests_on_a_pool_of_5_and_restarts_on_restart_txt
    with_rails_app("development", {}) do |dir, port, log|
      before = boot_id(port, log)
      assert_concurrent_requests(port)
      assert_pool_warning(log)
      FileUtils.touch(File.join(dir, "tmp/restart.txt"))
      eventually { (id = boot_id(port, log, retry_closed: true)) && id != before }
      assert_match(%r{tmp/restart\.txt changed: restarting}, File.read(log))
      assert_concurrent_requests(port, count: 20)
    end
  end

  def test_postgresql_in_production_holds_200_requests_on_a_pool_of_5
    with_rails_app("production", { "DATABASE_URL" => TestPostgres.url }) do |_dir, port, log|
      boot_id(port, log)
      assert_concurrent_requests(port)
      assert_pool_warning(log)
      refute_match(/restart/, File.read(log))
    end
  end

  # `bin/rails server -u heron`: the Railtie comes in through Bundler.require (here a plain
  # require) before the handler, and a restart re-runs Rails' own restart command.
  def test_rails_server_dash_u_heron_restarts_on_restart_txt
    Dir.mktmpdir("heron-rails") do |dir|
      write_app(dir)
      File.write(File.join(dir, "config/heron.rb"), "metrics false # its fixed development port may be taken\n")
      port = free_port
      serving(rails_env("development"), %W[bin/rails server -u heron -b 127.0.0.1 -p #{port}], chdir: dir) do |log|
        before = boot_id(port, log)
        FileUtils.touch(File.join(dir, "tmp/restart.txt"))
        eventually { (id = boot_id(port, log, retry_closed: true)) && id != before }
        assert_match(%r{tmp/restart\.txt changed: restarting}, File.read(log))
      end
    end
  end

  # The same app booted by something other than Heron (a console, a rake task, Puma) with Heron in
  # its bundle: the Railtie is loaded and does nothing.
  def test_an_app_not_served_by_heron_is_left_alone
    Dir.mktmpdir("heron-rails") do |dir|
      write_app(dir)
      script = 'require "./config/environment"; print [defined?(Heron::Railtie), ActiveSupport::IsolatedExecutionState.isolation_level].join(" ")'
      output = run!(rails_env("development"), RbConfig.ruby, "-I", File.join(ROOT, "lib"), "-e", script, chdir: dir)
      assert_equal "constant thread", output
    end
  end

  private

  def rails_env(environment) = RailsApp.env(@gem_home, environment)

  def with_rails_app(environment, env)
    Dir.mktmpdir("heron-rails") do |dir|
      write_app(dir)
      port = free_port
      env = env.merge(rails_env(environment))
      argv = [RbConfig.ruby, File.join(ROOT, "exe/heron"), "-e", environment, "--no-metrics", "-b", "tcp://127.0.0.1:#{port}", "config.ru"]
      serving(env, argv, chdir: dir) { |log| yield dir, port, log }
    end
  end

  # Sends `count` requests at once, each on its own connection, and checks every answer.
  def assert_concurrent_requests(port, count: REQUESTS)
    results = Array.new(count) do |i|
      Thread.new { Net::HTTP.start("127.0.0.1", port, read_timeout: 120) { |http| http.get("/hold/#{i}") } }
    end.map(&:value)
    failed = results.each_with_index.reject { |response, _| response.code == "200" }
    assert_empty failed.map { |response, i| "#{i}: #{response.code} #{response.body[0, 300]}" }
    seen = results.map { |response| JSON.parse(response.body) }
    assert_equal (0...count).map { |i| [i.to_s, nil, i.to_s, "fiber"] },
                 seen.map { |body| body.values_at("id", "before", "after", "isolation") }
    assert_operator seen.map { |body| body["connection"] }.uniq.size, :<=, 5
  end

  def assert_pool_warning(log)
    assert_match(/heron: warning: database "primary" has a pool of 5 connections, but this process serves up to 4096 requests at once/,
                 File.read(log))
  end

  def boot_id(port, log, retry_closed: false)
    response = get_when_up(port, "/boot", log)
    assert_equal "200", response.code, "#{response.body}\n#{File.read(log)}\n#{File.read(File.join(File.dirname(log), 'log/app.log'))[-3000..]}"
    JSON.parse(response.body)["boot"]
  rescue EOFError, Errno::ECONNRESET
    raise unless retry_closed
    nil
  end

  def write_app(dir) = RailsApp.write(dir, railties: %w[active_record action_controller], routes: ROUTES, files: APP)
end
