# frozen_string_literal: true

require "test_helper"
require_relative "../../support/haproxy_helper"

# The env the app sees.
class EnvBuilderTest < Minitest::Test
  KEYS = %w[REQUEST_METHOD PATH_INFO QUERY_STRING SERVER_NAME SERVER_PORT SERVER_PROTOCOL REMOTE_ADDR
            rack.url_scheme SCRIPT_NAME HTTP_HOST HTTP_X_CUSTOM].freeze

  def capture
    seen = {}
    app = lambda do |env|
      KEYS.each { |key| seen[key] = env[key] }
      seen[:extra] = [env["rack.hijack?"], env["rack.after_reply"], env["rack.response_finished"], env["rack.multithread"]]
      [200, { "content-type" => "text/plain" }, ["ok"]]
    end
    [seen, app]
  end

  def test_env_from_request_and_connection
    seen, app = capture
    with_server(app) do |port|
      raw_request(port, "GET /a/b?x=1&y=2 HTTP/1.1\r\nHost: example.com:8080\r\nX-Custom: v\r\nConnection: close\r\n\r\n")
    end
    assert_equal({ "REQUEST_METHOD" => "GET", "PATH_INFO" => "/a/b", "QUERY_STRING" => "x=1&y=2",
                   "SERVER_NAME" => "example.com", "SERVER_PORT" => "8080", "SERVER_PROTOCOL" => "HTTP/1.1",
                   "REMOTE_ADDR" => "127.0.0.1", "rack.url_scheme" => "http", "SCRIPT_NAME" => "",
                   "HTTP_HOST" => "example.com:8080", "HTTP_X_CUSTOM" => "v" }, seen.except(:extra))
    assert_equal [true, [], [], false], seen[:extra]
  end

  def remote_addr_seen(xff, **config)
    seen = []
    app = ->(env) { seen << env["REMOTE_ADDR"]; [200, { "content-type" => "text/plain" }, ["ok"]] }
    with_server(app, **config) do |port|
      raw_request(port, "GET / HTTP/1.1\r\nHost: x\r\n#{xff}Connection: close\r\n\r\n")
    end
    seen.first
  end

  def test_remote_addr_from_x_forwarded_for_only_through_trusted_proxies
    xff = "X-Forwarded-For: 6.6.6.6, 198.51.100.2\r\n"
    assert_equal "198.51.100.2", remote_addr_seen(xff, trusted_proxies: ["127.0.0.0/8"])
    assert_equal "127.0.0.1", remote_addr_seen(xff)
    assert_equal "127.0.0.1", remote_addr_seen(xff, trusted_proxies: ["10.0.0.0/8"])
    assert_equal "2001:db8::1", remote_addr_seen("Forwarded: for=\"[2001:db8::1]:80\"\r\n", trusted_proxies: ["127.0.0.1"])
  end

  # HAProxy in HTTP mode appends the client (::1) to X-Forwarded-For and connects from 127.0.0.1.
  def test_remote_addr_through_haproxy_option_forwardfor
    seen, app = capture
    [[["127.0.0.1"], "::1"], [[], "127.0.0.1"]].each do |trusted, expected|
      with_server(app, trusted_proxies: trusted) do |port|
        front = free_port("::1")
        pid = start_haproxy(front, "127.0.0.1:#{port}", mode: "http", options: ["option forwardfor"])
        socket = TCPSocket.new("::1", front)
        socket.write("GET / HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 6.6.6.6\r\nConnection: close\r\n\r\n")
        assert_equal 200, read_response(socket).first
        assert_equal expected, seen["REMOTE_ADDR"]
      ensure
        socket&.close
        stop_haproxy(pid)
      end
    end
  end

  def test_default_port_and_ipv6_host
    seen, app = capture
    with_server(app) do |port|
      raw_request(port, "GET / HTTP/1.1\r\nHost: [::1]\r\nConnection: close\r\n\r\n")
    end
    assert_equal ["[::1]", "80"], seen.values_at("SERVER_NAME", "SERVER_PORT")
  end

  def test_empty_host_falls_back_to_the_listener
    seen, app = capture
    with_server(app) do |port|
      raw_request(port, "GET / HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n")
    end
    assert_equal %w[127.0.0.1 80], seen.values_at("SERVER_NAME", "SERVER_PORT")
  end

  def test_http10_without_host_uses_listener_address
    seen, app = capture
    with_server(app) do |port|
      raw_request(port, "GET / HTTP/1.0\r\n\r\n")
      assert_equal ["127.0.0.1", port.to_s], seen.values_at("SERVER_NAME", "SERVER_PORT")
    end
  end

  def test_forwarded_proto_only_when_configured
    seen, app = capture
    request = "GET / HTTP/1.1\r\nHost: example.com\r\nX-Forwarded-Proto: https\r\nConnection: close\r\n\r\n"
    with_server(app) { |port| raw_request(port, request) }
    assert_equal %w[http 80], seen.values_at("rack.url_scheme", "SERVER_PORT")
    with_server(app, forwarded_proto: true) { |port| raw_request(port, request) }
    assert_equal %w[https 443], seen.values_at("rack.url_scheme", "SERVER_PORT")
  end
end
