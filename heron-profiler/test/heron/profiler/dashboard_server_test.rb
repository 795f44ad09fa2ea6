# frozen_string_literal: true

require "test_helper"
require "json"
require "logger"
require "tmpdir"
require "open3"
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
      assert_includes body, "N+1 ×5"
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

  FORWARDING = %w[X-Forwarded-For Forwarded X-Real-IP X-Client-IP True-Client-IP CF-Connecting-IP].freeze

  def test_loopback_with_any_forwarding_header_gets_neither_dashboard_nor_memory_profile
    with_server(@app) do |port|
      assert_equal 200, get(port, "/__heron").first, "the control: plain loopback is allowed"
      FORWARDING.each do |name|
        assert_equal 404, get(port, "/__heron", "#{name}: 203.0.113.9\r\n").first, name
        status, _, body = get(port, "/authors?__heron=memory", "#{name}: 203.0.113.9\r\n")
        assert_equal 404, status, name
        refute_includes body, "memory profile", name
      end
    end
  end

  def test_a_unix_socket_listener_serves_profiling_data_only_with_the_token
    Dir.mktmpdir do |dir|
      path = File.join(dir, "heron.sock")
      with_server(@app, binds: ["tcp://127.0.0.1:0", "unix://#{path}"]) do
        assert_equal 404, unix_get(path, "/__heron").first
        assert_equal 404, unix_get(path, "/authors?__heron=memory").first
        assert_equal 200, unix_get(path, "/authors").first
      end
      config = Heron::Configuration.new(profile: true, environment: "test", profile_token: "unix-t0ken")
      app = Heron::Profiler.wrap(AuthorsApp.new, config, logger: Logger.new(nil))
      with_server(app, binds: ["tcp://127.0.0.1:0", "unix://#{path}"], profile_token: "unix-t0ken") do
        assert_equal 404, unix_get(path, "/__heron").first
        assert_equal 200, unix_get(path, "/__heron", "X-Heron-Token: unix-t0ken\r\n").first
      end
    end
  end

  # HTTP/2 with prior knowledge over the same unix socket: the same rule.
  def test_a_unix_socket_listener_refuses_http2_too
    Dir.mktmpdir do |dir|
      path = File.join(dir, "heron.sock")
      with_server(@app, binds: ["tcp://127.0.0.1:0", "unix://#{path}"]) do
        h2 = ->(target) { Open3.capture2e("curl", "-s", "-o", "/dev/null", "-w", "%{http_version} %{http_code}", "--http2-prior-knowledge", "--unix-socket", path, "http://localhost#{target}").first }
        assert_equal "2 200", h2.call("/authors"), "the control: HTTP/2 is served over the socket"
        assert_equal "2 404", h2.call("/__heron")
        assert_equal "2 404", h2.call("/authors?__heron=memory")
      end
    end
  end

  def test_a_query_token_is_redacted_from_the_access_log
    config = Heron::Configuration.new(profile: true, environment: "test", profile_token: "q-s3cret-77")
    app = Heron::Profiler.wrap(AuthorsApp.new, config, logger: Logger.new(nil))
    with_server(app, profile_token: "q-s3cret-77") do |port|
      assert_equal 200, get(port, "/__heron?limit=5&token=q-s3cret-77").first
      assert_equal 200, get(port, "/__heron", "X-Heron-Token: q-s3cret-77\r\n").first
      Timeout.timeout(ProcessHelper::PATIENCE) { sleep 0.01 until server_log.scan("GET /__heron").size >= 2 }
      assert_includes server_log, "GET /__heron?limit=5&token=[REDACTED] HTTP/1.1"
      refute_includes server_log, "q-s3cret-77"
    end
  end

  def test_x_request_start_counts_only_from_trusted_proxies_and_within_range
    config = Heron::Configuration.new(profile: true, environment: "test", trusted_proxies: ["127.0.0.1"])
    app = Heron::Profiler.wrap(AuthorsApp.new, config, logger: Logger.new(nil))
    with_server(app, trusted_proxies: ["127.0.0.1"]) do |port|
      assert_operator queue_ms(port, "X-Request-Start: t=#{((Time.now.to_f - 0.3) * 1000).to_i}\r\n"), :>=, 300.0
      assert_operator queue_ms(port, "X-Request-Start: t=1\r\n"), :<, 1000.0, "a stamp from 1970 is ignored"
    end
    with_server(@app) do |port| # the default: no proxy is trusted
      assert_operator queue_ms(port, "X-Request-Start: t=#{((Time.now.to_f - 30) * 1000).to_i}\r\n"), :<, 1000.0
    end
  end

  def test_server_timing_outside_development_only_for_authorised_requests
    config = Heron::Configuration.new(profile: true, environment: "production")
    app = Heron::Profiler.wrap(AuthorsApp.new, config, logger: Logger.new(nil))
    with_server(app, profile: true, environment: "production") do |port|
      assert get(port, "/authors")[1].key?("server-timing"), "loopback, no proxy: allowed"
      headers = get(port, "/authors", "X-Forwarded-For: 203.0.113.9\r\n")[1]
      refute headers.key?("server-timing")
      refute headers.key?("x-heron-n-plus-one")
    end
    config = Heron::Configuration.new(profile: true, environment: "production", profile_token: "st-t0ken")
    app = Heron::Profiler.wrap(AuthorsApp.new, config, logger: Logger.new(nil))
    with_server(app, profile: true, environment: "production", profile_token: "st-t0ken") do |port|
      refute get(port, "/authors")[1].key?("server-timing")
      assert get(port, "/authors", "X-Heron-Token: st-t0ken\r\n")[1].key?("server-timing")
    end
  end

  private

  # @return [Float] the queue time recorded for one GET /authors carrying `header`.
  def queue_ms(port, header)
    id = recorded(Heron::Profiler.record_id(get(port, "/authors", header)[1].fetch("server-timing")))
    Heron::Profiler.store.find(id)[:queue_ms]
  end

  def unix_get(path, target, headers = "")
    socket = UNIXSocket.new(path)
    socket.write("GET #{target} HTTP/1.1\r\nHost: localhost\r\n#{headers}Connection: close\r\n\r\n")
    read_response(socket)
  ensure
    socket&.close
  end

  # The profiler stores a record once the response is finished, just after the client has it.
  # @return [String] the id, once its record is in the store.
  def recorded(id)
    refute_nil id
    Timeout.timeout(ProcessHelper::PATIENCE) { sleep(0.01) until Heron::Profiler.store.find(id) }
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
