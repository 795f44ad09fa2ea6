# frozen_string_literal: true

require "test_helper"
require "heron/profiler"
require "net/http"
require_relative "profiled_server"

# Middleware#serve, the entry Heron's connections use: the request's method, path, query and
# proxy queue header come from the parser that read it, and the Server-Timing goes into the
# head lines the server writes, not into the app's headers.
class MiddlewareServeTest < Minitest::Test
  def setup
    @store = Heron::Profiler::Store.new
    @head = String.new
  end

  def middleware(app, lint: true, **settings)
    config = Heron::Configuration.new(environment: "production", **settings)
    Heron::Profiler::Middleware.new(lint ? Rack::Lint.new(app) : app, config, store: @store)
  end

  # A Lint-complete env filled by a real parser from `request_head`.
  # @return [Array(Hash, Heron::HTTPParser)]
  def parsed(request_head)
    parser = Heron::HTTPParser.new
    env = Rack::MockRequest.env_for("/")
    env["rack.after_reply"] = []
    assert parser.parse(env, request_head)
    [env, parser]
  end

  # Serves one request and closes its body, as the server does once it is written.
  def serve(app, request_head = "GET /items?page=2 HTTP/1.1\r\nHost: t\r\n\r\n", started_at: now)
    env, parser = parsed(request_head)
    respond(app.serve(env, parser, started_at, @head))
  end

  def respond(response)
    response[2].close if response[2].respond_to?(:close)
    response
  end

  def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

  def timing_line
    assert_match(/\Aserver-timing: (app;dur=[^\r\n]+)\r\n\z/, @head)
    @head[/\Aserver-timing: (.*)\r\n\z/, 1]
  end

  def test_the_timing_goes_into_the_head_lines_and_the_headers_stay_the_apps
    app_headers = { "content-type" => "text/plain", "server-timing" => "cache;desc=hit" }
    status, headers, = serve(middleware(->(_env) { [200, app_headers, ["ok"]] }), started_at: now - 0.05)
    assert_equal 200, status
    assert_equal({ "content-type" => "text/plain", "server-timing" => "cache;desc=hit" }, headers)
    record = @store.find(Heron::Profiler.record_id(timing_line))
    assert_equal ["GET", "/items", "page=2", 200], record.values_at(:method, :path, :query, :status)
    assert_operator record[:queue_ms], :>=, 50.0
    assert_equal 0.0, record[:after_reply_ms]
  end

  # Heron's connection calls #serve right after parsing; what is recorded is what was parsed.
  def test_the_method_path_and_query_come_from_the_parser_not_the_env
    env, parser = parsed("POST /form?x=1 HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n")
    env["PATH_INFO"] = "/elsewhere"
    respond(middleware(->(_env) { [204, {}, []] }).serve(env, parser, now, @head))
    assert_equal %w[POST /form x=1], @store.recent.first.values_at(:method, :path, :query)
  end

  def test_a_proxy_queue_header_wins_over_the_servers_stamp
    sent = ((Time.now.to_f - 0.25) * 1_000_000).to_i
    serve(middleware(->(_env) { [204, {}, []] }), "GET / HTTP/1.1\r\nHost: t\r\nX-Queue-Start: t=#{sent}\r\n\r\n")
    assert_operator @store.recent.first[:queue_ms], :>=, 250.0
  end

  def test_frozen_headers_are_left_alone
    frozen = { "content-type" => "text/plain" }.freeze
    _status, headers, = serve(middleware(->(_env) { [200, frozen, ["ok"]] }, lint: false))
    assert_same frozen, headers
    timing_line
  end

  def test_the_head_lines_are_emptied_first_and_stay_empty_when_nothing_is_measured
    @head << "server-timing: stale\r\n"
    app = middleware(->(_env) { [200, {}, ["ok"]] }, profile_sample: 2)
    serve(app)
    refute_includes timing_line, "stale"
    serve(app)
    assert_empty @head
  end

  def test_a_parser_without_a_head_falls_back_to_call
    env = Rack::MockRequest.env_for("/fallback")
    _status, headers, = respond(middleware(->(_env) { [200, {}, ["ok"]] }).serve(env, Heron::HTTPParser.new, now, @head))
    assert_empty @head
    assert_match(/\Aapp;dur=/, headers["server-timing"])
    assert_equal "/fallback", @store.recent.first[:path]
  end
end

# Through the real server: its connections call #serve.
class MiddlewareServeServerTest < Minitest::Test
  include ProfiledServer

  def test_an_apps_server_timing_and_the_profilers_are_two_lines_of_one_list
    app = ->(_env) { [200, { "content-type" => "text/plain", "server-timing" => "cache;desc=hit" }, ["ok"]] }
    with_profiled_server(app) do |port|
      socket = connect(port)
      socket.write("GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
      lines = read_all(socket, timeout: 30).split("\r\n\r\n", 2).first.split("\r\n")
      assert_equal ["server-timing: cache;desc=hit"], lines.grep(/\Aserver-timing: cache/)
      assert_equal 1, lines.grep(/\Aserver-timing: app;dur=.*heron;desc="/).size
      joined = Net::HTTP.get_response(URI("http://127.0.0.1:#{port}/"))["server-timing"]
      assert_match(/\Acache;desc=hit, app;dur=/, joined)
      assert Heron::Profiler.store.find(Heron::Profiler.record_id(joined))
    ensure
      socket&.close
    end
  end
end
