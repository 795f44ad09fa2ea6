# frozen_string_literal: true

require "test_helper"
require "logger"
require "tmpdir"

# The demo models bind to their database when loaded, so point them at a scratch file first.
ENV["HERON_DEMO_DB"] ||= File.join(Dir.mktmpdir("heron-demo"), "users.sqlite3")
require_relative "../../../examples/demo/users_app"
require_relative "../../../examples/demo/users/seeder"
require "heron/profiler"

# The demo's users app (examples/demo) behind the profiler on the real server: the N+1 and the
# walk through seed 004 that heron-profiler/docs/profiling.md tells (the app's own tests are the
# core's, in test/examples/users_app_test.rb).
class UsersAppProfilerTest < Minitest::Test
  include ServerHelper

  USERS = 60
  Minitest.after_run { FileUtils.rm_rf(File.dirname(ENV["HERON_DEMO_DB"])) }
  Demo::Users::Seeder.new(Demo::Users::Database.connection, users: USERS).run

  def test_the_profiler_sees_the_n_plus_one_through_the_real_server
    app = Heron::Profiler.wrap(Demo::UsersApp.new, Heron::Configuration.new(profile: true), logger: Logger.new(nil))
    with_server(app) do |port|
      lazy = recorded(Heron::Profiler.record_id(request(port, "/")["server-timing"]))
      eager = recorded(Heron::Profiler.record_id(request(port, "/?eager=1")["server-timing"]))
      assert_equal [1 + 4 * USERS, 5], [lazy[:db_count], eager[:db_count]]
      assert_equal 4, lazy[:n_plus_one].size
      assert_empty eager[:n_plus_one]
    end
  end

  # Seed 004's walk (heron-profiler/docs/profiling.md): the four steps through the real server behind the
  # profiler, compared by the counts its server-timing header reports (never by time).
  def test_the_walk_through_seed_004_holds_step_by_step
    app = Heron::Profiler.wrap(Rack::Lint.new(Demo::UsersApp.new), Heron::Configuration.new(profile: true), logger: Logger.new(nil))
    with_server(app, lint: false) do |port|
      steps = (1..4).to_h { |step| [step, timing(request(port, "/?step=#{step}"))] }
      warm = timing(request(port, "/?step=4"))
      assert_operator steps[1][:queries], :>, steps[2][:queries], "eager loading runs fewer queries"
      assert_equal 1 + 7 * USERS, steps[1][:queries]
      assert_operator steps[3][:allocations], :<, steps[2][:allocations], "the narrow index allocates less"
      assert_equal 5, steps[3][:queries]
      assert_equal 0, warm[:queries], "a warm cache runs no query"
      assert_operator warm[:allocations], :<, steps[3][:allocations]
    end
  end

  private

  # @return [Hash] {queries:, allocations:} from a profiled response's server-timing.
  def timing(headers)
    value = headers.fetch("server-timing")
    { queries: value[/db;dur=[\d.]+;desc="(\d+) quer/, 1].to_i, allocations: value[/alloc;desc="(\d+) objects"/, 1].to_i }
  end

  # The profiler stores a record once the response is finished, just after the client has it.
  def recorded(id)
    Timeout.timeout(5) do
      loop { (record = Heron::Profiler.store.find(id)) ? (return record) : sleep(0.01) }
    end
  end

  def request(port, target)
    socket = connect(port)
    socket.write("GET #{target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    status, headers, = read_response(socket)
    assert_equal 200, status
    headers
  ensure
    socket&.close
  end
end
