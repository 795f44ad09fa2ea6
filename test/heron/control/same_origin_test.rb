# frozen_string_literal: true

require "test_helper"
require "heron/control"

# What a web page can do to a control listener on 127.0.0.1, over a real listener and its real
# endpoints: a cross-site simple POST (no preflight) must not stop the server, and a page that
# rebinds its own host name to 127.0.0.1 must not read /stats or /backtraces. The action's
# signal goes to a real child process, so "stopped" is observed, not assumed.
class ControlSameOriginTest < Minitest::Test
  def setup
    @victim = Process.spawn("sleep", "120")
    listen
  end

  def teardown
    @server.close
    Process.kill("KILL", @victim)
    Process.wait(@victim)
  rescue Errno::ESRCH, Errno::ECHILD
    nil
  end

  def test_a_cross_site_simple_post_does_not_stop_the_server
    # What a form on https://evil.example submitting to http://127.0.0.1:PORT/control/stop sends.
    status, body = request("POST /control/stop", "host" => "127.0.0.1:#{@port}", "origin" => "https://evil.example",
                                                 "content-type" => "application/x-www-form-urlencoded",
                                                 "sec-fetch-site" => "cross-site")
    assert_equal 403, status
    assert_includes body, "cross-site request refused"
    status, = request("POST /control/stop", "host" => "127.0.0.1:#{@port}", "origin" => "null")
    assert_equal 403, status, "a sandboxed page's Origin: null"
    status, = request("POST /control/stop", "host" => "127.0.0.1:#{@port}", "origin" => "http://127.0.0.1:3000")
    assert_equal 403, status, "a page on another port of this host is another site"
    status, = request("POST /control/stop", "host" => "127.0.0.1:#{@port}", "sec-fetch-site" => "same-site")
    assert_equal 403, status
    assert_nil Process.wait(@victim, Process::WNOHANG), "the server was stopped by a web page"
  end

  def test_dns_rebinding_cannot_read_stats_or_backtraces_or_act
    %w[/stats /backtraces].each do |path|
      status, body = request("GET #{path}", "host" => "rebind.evil.example:#{@port}")
      assert_equal 403, status, path
      assert_includes body, "does not name this listener"
      assert_equal 403, request("GET #{path}", {}).first, "#{path} without Host"
      assert_equal 403, request("GET #{path}", "host" => "127.0.0.1:#{@port + 1}").first, "#{path} on another port"
    end
    assert_equal 403, request("POST /control/stop", "host" => "rebind.evil.example:#{@port}").first
    assert_equal 200, request("GET /health/live", "host" => "rebind.evil.example:#{@port}").first, "probes are never checked"
    assert_nil Process.wait(@victim, Process::WNOHANG)
  end

  def test_a_client_that_names_the_listener_reads_and_acts
    assert_equal 200, request("GET /stats", "host" => "127.0.0.1:#{@port}").first
    assert_equal 200, request("GET /backtraces", "host" => "localhost:#{@port}").first
    status, = request("POST /control/stop", "host" => "localhost:#{@port}", "origin" => "http://localhost:#{@port}",
                                            "sec-fetch-site" => "same-origin")
    assert_equal 202, status
    _, exit_status = Process.wait2(@victim)
    assert_equal "TERM", Signal.signame(exit_status.termsig)
  end

  # With a token the Host check gives way to it (a port forward changes the address a client
  # names; a page cannot know the token), but a cross-site browser request is still refused.
  def test_the_token_replaces_the_host_check_but_not_the_cross_site_one
    @server.close
    listen(token: "s3cret")
    forwarded = { "host" => "localhost:8080" } # kubectl port-forward 8080:PORT
    assert_equal 403, request("GET /stats", forwarded).first, "no token: the Host must name the listener"
    assert_equal 401, request("GET /stats", "host" => "localhost:#{@port}").first
    assert_equal 200, request("GET /stats", forwarded.merge("authorization" => "Bearer s3cret")).first
    assert_equal 403, request("POST /control/stop", forwarded.merge("authorization" => "Bearer s3cret",
                                                                    "origin" => "https://evil.example")).first
    assert_nil Process.wait(@victim, Process::WNOHANG)
  end

  def test_an_ipv6_listener_is_named_by_its_bracketed_address
    @server.close
    listen(uri: "tcp://[::1]:0", host: "::1")
    assert_equal 200, request("GET /stats", "host" => "[::1]:#{@port}").first
    assert_equal 200, request("GET /stats", "host" => "localhost:#{@port}").first
    assert_equal 403, request("GET /stats", "host" => "[::2]:#{@port}").first
    assert_equal 403, request("GET /stats", "host" => "127.0.0.1:#{@port}").first, "not the address it arrived on"
  end

  private

  # A control listener on 127.0.0.1 whose actions signal the victim process.
  def listen(token: nil, uri: "tcp://127.0.0.1:0", host: "127.0.0.1")
    state = Heron::Control::State.new(mode: "single", draining: -> { false }, counters: -> { {} })
    log = StringIO.new
    logger = Heron::Log::Logger.new(Heron::Configuration.new(log_io: log, error_io: log))
    endpoints = Heron::Control::Endpoints.new(state, pid: @victim, token: token)
    @server = Heron::Control::Server.new(uri, endpoints, logger).start
    @port = @server.port or skip("cannot listen on #{uri}")
    @host = host
  end

  def request(line, headers)
    socket = TCPSocket.new(@host, @port)
    fields = headers.map { |name, value| "#{name}: #{value}\r\n" }.join
    socket.write("#{line} HTTP/1.1\r\n#{fields}content-length: 0\r\n\r\n")
    status, _, body = read_response(socket)
    [status, body]
  ensure
    socket&.close
  end
end
