# frozen_string_literal: true

require "test_helper"
require "json"
require "logger"
require "tmpdir"

# The demo models bind to their database when loaded, so point them at a scratch file first.
ENV["HERON_DEMO_DB"] = File.join(Dir.mktmpdir("heron-demo"), "users.sqlite3")
require_relative "../../examples/demo/users_app"
require_relative "../../examples/demo/users/seeder"

class UsersAppTest < Minitest::Test
  USERS = 60
  DB = Demo::Users::Database.connection
  Demo::Users::Seeder.new(DB, users: USERS).run
  Minitest.after_run { FileUtils.rm_rf(File.dirname(ENV["HERON_DEMO_DB"])) }

  # Counts the statements Sequel runs while a block runs.
  class QueryCounter < Logger
    attr_reader :statements

    def initialize
      super(nil)
      @statements = []
    end

    def info(message = nil)
      @statements << message if message&.include?("SELECT")
      true
    end
  end

  def test_lists_every_user_with_roles_groups_employee_and_last_login
    status, headers, body = get("")
    assert_equal [200, "application/json"], [status, headers["content-type"]]
    users = body["users"]
    assert_equal [USERS, USERS], [users.size, body["count"]]
    first = users.first
    assert_equal %w[email employee_id first_name groups id last_login_at last_name roles], first.keys.sort
    assert_equal "user1@example.com", first["email"]
    refute_empty first["roles"]
    assert_equal %w[description id title], first["roles"].first.keys.sort
    assert_equal %w[archived description id title], first["groups"].first.keys.sort
    assert(users.any? { |user| user["employee_id"].nil? } && users.any? { |user| user["employee_id"] })
    assert(users.any? { |user| user["last_login_at"]&.match?(/\A\d{4}-\d\d-\d\dT/) })
  end

  def test_lazy_version_runs_four_queries_per_user
    statements = count_queries { get("/") }
    assert_equal 1 + 4 * USERS, statements.size
    assert_equal USERS, statements.count { |sql| sql.include?("FROM `employees`") }
  end

  def test_eager_version_runs_a_handful_of_queries_and_returns_the_same_json
    lazy = get("/")[2]
    statements = count_queries { @eager = get("/", "eager=1")[2] }
    assert_operator statements.size, :<=, 10
    assert_equal 5, statements.size
    assert_equal lazy, @eager
  end

  def test_roles_filter
    admins = DB[:assignments].join(:roles, id: :role_id).where(title: "admin").select_map(:user_id).uniq.sort
    users = get("", "roles=admin&eager=1")[2]["users"]
    assert_equal admins, users.map { |user| user["id"] }
    assert(users.all? { |user| user["roles"].any? { |role| role["title"] == "admin" } })
    both = get("", "roles=admin,%20billing")[2]["users"]
    assert_operator both.size, :>, users.size
    assert_equal USERS, get("", "roles=")[2]["count"]
  end

  def test_other_paths_methods_and_bad_queries
    assert_equal 404, get("/42").first
    assert_equal 405, get("/", method: "POST").first
    assert_equal 400, get("/", "roles=%zz").first
  end

  def test_seeder_is_idempotent_and_reseeds_for_another_size
    refute Demo::Users::Seeder.new(DB, users: USERS).run
    scratch = Demo::Users::Database.open(File.join(Dir.mktmpdir("heron-demo-seed"), "seed.sqlite3"))
    assert Demo::Users::Seeder.new(scratch, users: 5).run
    assert Demo::Users::Seeder.new(scratch, users: 3).run
    assert_equal 3, scratch[:users].count
    assert_equal 6, scratch[:roles].count
  end

  def test_setup_script_seeds_a_fresh_database_quickly_and_only_once
    env = { "HERON_DEMO_DB" => File.join(Dir.mktmpdir("heron-demo-setup"), "demo.sqlite3"), "HERON_DEMO_USERS" => "1000" }
    script = File.expand_path("../../examples/demo/db/setup.rb", __dir__)
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    first = IO.popen(env, [RbConfig.ruby, script], &:read)
    assert_operator Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, :<, 5
    assert_match(/seeded with 1000 users/, first)
    assert_match(/already has 1000 users/, IO.popen(env, [RbConfig.ruby, script], &:read))
  ensure
    FileUtils.rm_rf(File.dirname(env["HERON_DEMO_DB"]))
  end

  def test_step_3_and_4_give_the_same_json_as_the_serializer
    plain = get("/")[2]
    assert_equal plain, get("/", "step=3")[2]
    assert_equal plain, get("/", "step=4")[2]
    admins = get("/", "roles=admin,billing&eager=1")[2]
    assert_equal admins, get("/", "roles=admin,billing&step=3")[2]
    shown = get("/", "step=2")[2]
    assert_equal shown, get("/", "step=1")[2]
    assert_equal plain["users"].first.keys + %w[assignments group_assignments authentication_tokens], shown["users"].first.keys
  end

  def test_the_cache_answers_until_it_is_expired
    app = Demo::UsersApp.new
    first = count_queries { app.call(users_env("step=4")) }
    assert_equal 5, first.size
    assert_empty count_queries { app.call(users_env("step=4")) }
    app.cache.expire
    assert_equal 5, count_queries { app.call(users_env("step=4")) }.size
  end

  private

  def users_env(query)
    Rack::MockRequest.env_for("/users", "QUERY_STRING" => query).merge("SCRIPT_NAME" => "/users", "PATH_INFO" => "")
  end

  def get(path, query = "", method: "GET")
    env = Rack::MockRequest.env_for("/users", method: method, "QUERY_STRING" => query)
    env["SCRIPT_NAME"] = "/users"
    env["PATH_INFO"] = path
    status, headers, body = Rack::Lint.new(Demo::UsersApp.new).call(env)
    text = body.to_enum(:each).to_a.join
    body.close
    [status, headers, JSON.parse(text)]
  end

  def count_queries
    counter = QueryCounter.new
    DB.loggers << counter
    yield
    counter.statements
  ensure
    DB.loggers.delete(counter)
  end
end
