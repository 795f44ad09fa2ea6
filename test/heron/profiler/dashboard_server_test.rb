# frozen_string_literal: true

require "test_helper"
require "json"
require "logger"
require "sequel"
require "heron/profiler"
require "heron/profiler/dashboard"
require "heron/profiler/memory_profile"

# The dashboard and the memory profile behind the real profiler middleware on a real server.
class DashboardServerTest < Minitest::Test
  DB = Sequel.sqlite
  DB.create_table(:authors) { primary_key :id; String :name }
  DB.create_table(:books) { primary_key :id; Integer :author_id; String :title }
  5.times { |i| DB[:books].insert(author_id: DB[:authors].insert(name: "author #{i}"), title: "book #{i}") }

  # Loads each author's books one query at a time: a textbook N+1.
  class AuthorsApp
    def call(_env)
      names = DB[:authors].all.map { |author| "#{author[:name]}: #{DB[:books].where(author_id: author[:id]).count}" }
      [200, { "content-type" => "text/plain" }, [names.join("\n")]]
    end
  end

  # with_server wraps the whole stack (profiler, dashboard and app) in Rack::Lint.
  def setup
    @config = Heron::Configuration.new(profile: true, environment: "test")
    @app = Heron::Profiler.wrap(AuthorsApp.new, @config, logger: Logger.new(nil))
  end

  def test_recorded_request_shows_in_the_list_and_the_detail
    with_server(@app) do |port|
      id = recorded(Heron::Profiler.record_id(get(port, "/authors")[1]["server-timing"]))
      status, headers, body = get(port, "/__heron")
      assert_equal [200, "text/html; charset=utf-8"], [status, headers["content-type"]]
      assert_includes body, %(href="/__heron/requests/#{id}")
      assert_includes body, "N+1 ×1"
      _, _, detail = get(port, "/__heron/requests/#{id}")
      assert_includes detail, "SELECT count(*) AS"
      assert_match(/dashboard_server_test\.rb:\d+/, detail, "call sites point at the app")
      assert_match(/×5/, detail)
    end
  end

  def test_json_endpoints
    with_server(@app) do |port|
      id = recorded(Heron::Profiler.record_id(get(port, "/authors")[1]["server-timing"]))
      listed = JSON.parse(get(port, "/__heron.json")[2])["requests"].find { |item| item["id"] == id }
      assert_equal ["/authors", 6], listed.values_at("path", "db_count")
      detail = JSON.parse(get(port, "/__heron/requests/#{id}", "Accept: application/json\r\n")[2])["request"]
      assert_equal 6, detail["queries"].size
      assert_equal 5, detail["n_plus_one"].first["count"]
    end
  end

  def test_memory_profile_through_the_server
    with_server(@app) do |port|
      status, _, body = get(port, "/authors?__heron=memory")
      assert_equal 200, status
      assert_match(%r{\AHeron memory profile: GET /authors -> 200}, body)
      assert_match(/Total allocated:/, body)
    end
  end

  def test_token_protected_dashboard_over_the_server
    config = Heron::Configuration.new(profile: true, environment: "test", profile_token: "abc")
    app = Heron::Profiler.wrap(AuthorsApp.new, config, logger: Logger.new(nil))
    with_server(app, profile_token: "abc") do |port|
      assert_equal 404, get(port, "/__heron").first
      assert_equal 200, get(port, "/__heron?token=abc").first
      assert_equal 200, get(port, "/__heron", "Authorization: Bearer abc\r\n").first
    end
  end

  private

  # The profiler stores a record once the response is finished, just after the client has it.
  # @return [String] the id, once its record is in the store.
  def recorded(id)
    refute_nil id
    Timeout.timeout(5) { sleep(0.01) until Heron::Profiler.store.find(id) }
    id
  end

  def get(port, target, headers = "")
    socket = connect(port)
    socket.write("GET #{target} HTTP/1.1\r\nHost: localhost\r\n#{headers}Connection: close\r\n\r\n")
    status, headers, body = read_response(socket)
    [status, headers, body.force_encoding(Encoding::UTF_8)]
  ensure
    socket&.close
  end
end
