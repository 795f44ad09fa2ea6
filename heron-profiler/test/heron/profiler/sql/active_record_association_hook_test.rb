# frozen_string_literal: true

require "test_helper"
require "json"
require "tmpdir"
require "support/install_helper"

# ActiveRecord 7.1 on SQLite (from the Rails gem home that bin/setup-rails installs; skipped
# without it) behind `heron` in development: a lazy `has_one` read per user is an N+1 advised
# with `.includes`, in the header, the log and the record; `includes` leaves nothing to advise.
class ActiveRecordAssociationHookTest < Minitest::Test
  include InstallHelper

  ADVICE = "User => [:employee]: add .includes(:employee)"

  CONFIG_RU = <<~'RUBY'
    require "active_record"
    require "json"
    ActiveRecord::Base.establish_connection(adapter: "sqlite3", database: File.expand_path("test.sqlite3", __dir__))
    ActiveRecord::Schema.verbose = false
    ActiveRecord::Schema.define do
      create_table(:users, force: true) { |t| t.string :name }
      create_table(:employees, force: true) { |t| t.integer :user_id; t.string :badge }
    end
    class User < ActiveRecord::Base
      has_one :employee
    end
    class Employee < ActiveRecord::Base
      belongs_to :user
    end
    5.times { |i| User.create!(name: "user #{i}").create_employee!(badge: "b#{i}") }
    app = lambda do |env|
      users = env["QUERY_STRING"] == "eager=1" ? User.includes(:employee).order(:id) : User.order(:id)
      badges = users.map { |user| user.employee.badge }
      [200, { "content-type" => "text/plain" }, [badges.join(",")]]
    end
    run Rack::Lint.new(app)
  RUBY

  def setup
    @gem_home = ENV["HERON_RAILS_GEM_HOME"] or skip "Rails is not installed (bin/setup-rails installs it; bin/test runs it)"
  end

  def test_a_lazy_has_one_is_advised_with_includes_until_it_is_included
    with_app do |port, log|
      response = get_when_up(port, "/users", log)
      assert_equal "b0,b1,b2,b3,b4", response.body
      assert_match(/\A1 query x5 at config\.ru:18 \[#{Regexp.escape(ADVICE)}\] \(SELECT/, response["x-heron-n-plus-one"])
      record = JSON.parse(get_when_up(port, "/__heron/requests/#{record_id(response)}.json", log).body)["request"]
      assert_equal [[5, ADVICE]], record["n_plus_one"].map { |finding| finding.values_at("count", "advice") }
      assert_includes File.read(log), "N+1 query in GET /users: 5x at config.ru:18 [#{ADVICE}]: SELECT"
      eager = get_when_up(port, "/users?eager=1", log)
      assert_equal ["b0,b1,b2,b3,b4", nil], [eager.body, eager["x-heron-n-plus-one"]], "includes leaves nothing to advise"
    end
  end

  private

  def record_id(response)
    response["server-timing"][/heron;desc="([^"]+)"/, 1]
  end

  def with_app
    Dir.mktmpdir("heron-ar") do |dir|
      File.write(File.join(dir, "config.ru"), CONFIG_RU)
      port = free_port
      env = { "GEM_HOME" => @gem_home, "GEM_PATH" => [@gem_home, *Gem.path].join(File::PATH_SEPARATOR) }
      argv = [RbConfig.ruby, "-I", File.join(ROOT, "heron-profiler/lib"), File.join(ROOT, "exe/heron"), "-e", "development", "--no-metrics", "-b", "tcp://127.0.0.1:#{port}", "config.ru"]
      serving(env, argv, chdir: dir) { |log| yield port, log }
    end
  end
end
