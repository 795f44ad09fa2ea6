# frozen_string_literal: true

require "test_helper"
require "stringio"
require "rack/builder"
require "async/websocket/adapters/rack"
require "heron/attack"
require "support/tls_certificates"
require_relative "support/raw_peer"

# `heron attack ws://...` against a Rack WebSocket echo app (async-websocket, support/echo.ru) on
# Heron and on Falcon, over real sockets: connections opened at a rate, messages at a rate on
# each, echoes timed, connect latency reported.
class AttackWebSocketTest < Minitest::Test
  include ServerHelper
  include ProcessHelper
  include RawPeer

  ECHO = File.expand_path("support/echo.ru", __dir__)

  def setup
    @dir = Dir.mktmpdir
  end

  def teardown
    FileUtils.rm_rf(@dir)
  end

  def echo_app
    Rack::Builder.parse_file(ECHO).then { |app, _| app }
  end

  def cli(*argv)
    @stdout = StringIO.new
    @stderr = StringIO.new
    json = File.join(@dir, "run.json")
    FileUtils.rm_f(json)
    status = Heron::Attack::CLI.new([*argv, "--json", json], stdout: @stdout, stderr: @stderr).run
    @report = File.exist?(json) ? Heron::Attack::JsonReport.load(json) : nil
    status
  end

  def assert_echoed(connections, messages, size)
    total = connections * messages
    assert_equal({ "sent" => total, "responses" => total, "ok" => total, "errors" => 0, "success_ratio" => 1.0 }, @report["requests"])
    assert_equal({ "101" => total }, @report["status_codes"])
    assert_equal({ "in" => total * size, "out" => total * size }, @report["bytes"])
    ws = @report["websocket"]
    assert_equal [connections, connections, messages], ws.values_at("connections", "opened", "messages_per_connection")
    assert_operator ws["connect_ms"]["p50"], :>, 0
    assert_operator @report["latency_ms"]["corrected"]["p50"], :>, 0
    assert_equal "websocket", @report["plan"]["protocol"]
  end

  def test_echoes_on_heron_with_connect_latency_in_the_report
    with_server(echo_app, lint: false) do |port|
      assert_equal 0, cli("ws://127.0.0.1:#{port}/", "-c", "5", "--connect-rate", "50", "-r", "20", "-n", "10"), @stderr.string
      assert_echoed(5, 10, "heron attack".bytesize)
      assert_match(%r{^Heron attack: WebSocket ws://127\.0\.0\.1:\d+/: 5 connections opened at 50\.00/s, each sending 10 messages at 20\.00/s}, @stdout.string)
      assert_match(/^  connect +\d/, @stdout.string)
    end
  end

  def test_binary_messages_and_several_processes
    body = File.join(@dir, "body")
    File.binwrite(body, (0..255).map(&:chr).join.b * 4) # not UTF-8: sent as binary frames
    with_server(echo_app, lint: false) do |port|
      assert_equal 0, cli("ws://127.0.0.1:#{port}/", "-c", "4", "-r", "50", "-n", "5", "--body-file", body, "--processes", "2"), @stderr.string
      assert_echoed(4, 5, 1024)
    end
  end

  def test_wss_against_heron
    paths = TLSCertificates.make(@dir, "localhost")
    cert, key = paths["localhost"]
    with_server(echo_app, lint: false, binds: ["ssl://127.0.0.1:0?#{URI.encode_www_form(cert: cert, key: key)}"]) do |port|
      assert_equal 0, cli("wss://localhost:#{port}/", "-c", "3", "-r", "50", "-n", "4", "--cacert", paths["ca"]), @stderr.string
      assert_echoed(3, 4, "heron attack".bytesize)
    end
  end

  def test_echoes_on_falcon
    port = TCPServer.open("127.0.0.1", 0) { |server| server.addr[1] }
    log = File.join(@dir, "falcon.log")
    pid = Process.spawn(RbConfig.ruby, Gem.bin_path("falcon", "falcon"), "serve", "-b", "http://127.0.0.1:#{port}", "-n", "1",
                        "-c", ECHO, out: log, err: %i[child out], pgroup: true)
    (@spawned_groups ||= []) << pid
    eventually { File.read(log).include?('"ready":true') }
    assert_equal 0, cli("ws://127.0.0.1:#{port}/", "-c", "4", "-r", "40", "-d", "0.5"), @stderr.string
    assert_echoed(4, 20, "heron attack".bytesize)
  ensure
    stop_heron(pid)
  end

  def test_a_server_that_does_not_upgrade_fails_every_connection
    app = ->(_env) { [200, { "content-type" => "text/plain", "content-length" => "2" }, ["no"]] }
    with_server(app, lint: false) do |port|
      assert_equal 4, cli("ws://127.0.0.1:#{port}/", "-c", "3", "-r", "10", "-n", "2")
      assert_equal 3, @report["requests"]["errors"]
      assert_equal 0, @report["websocket"]["opened"]
      assert_match(/no WebSocket upgrade: "HTTP\/1\.1 200/, @report["error_samples"].keys.join)
      assert_match(/every WebSocket connection failed \(3 tried\)/, @stderr.string)
    end
  end

  def test_messages_never_echoed_time_out
    silent = lambda do |env|
      Async::WebSocket::Adapters::Rack.open(env) { |connection| nil while connection.read }
    end
    with_server(silent, lint: false) do |port|
      assert_equal 4, cli("ws://127.0.0.1:#{port}/", "-c", "2", "-r", "20", "-n", "3", "--timeout", "0.3")
      assert_equal 6, @report["errors"]["timeout"]
      assert_equal 6, @report["requests"]["sent"]
      assert_equal 2, @report["websocket"]["opened"]
    end
  end

  # The server closes each connection after its third echo: the fourth message fails as a reset
  # (sent, never answered), and the connection sends no more.
  def test_a_connection_the_server_closes_fails_what_it_was_waiting_for_and_sends_no_more
    closing = lambda do |env|
      Async::WebSocket::Adapters::Rack.open(env) do |connection|
        3.times do
          connection.write(connection.read)
          connection.flush
        end
        connection.read
      end
    end
    with_server(closing, lint: false) do |port|
      assert_equal 0, cli("ws://127.0.0.1:#{port}/", "-c", "2", "-r", "10", "-n", "10", "--timeout", "5"), @stderr.string
      assert_equal({ "101" => 6 }, @report["status_codes"])
      assert_equal 2, @report["errors"]["reset"], @report["error_samples"].inspect
      assert_equal 8, @report["requests"]["sent"]
      assert_match(/stopped early: 8 of 20 planned requests were sent/, @report["warnings"].join)
    end
  end

  # A server that upgrades, then announces a 10 MB frame: the generator refuses it at once instead
  # of buffering towards it.
  def test_a_frame_larger_than_the_limit_fails_its_connection
    server = TCPServer.new("127.0.0.1", 0)
    peer = raw_peer(server) { |socket| huge_frame(socket) }
    assert_equal 4, cli("ws://127.0.0.1:#{server.addr[1]}/", "-r", "10", "-n", "1", "--timeout", "20")
    assert_match(/Invalid payload length: 10000000 > 65536/, @report["error_samples"].keys.join)
    assert_equal 0, @report["errors"]["timeout"]
    assert_match(/no WebSocket message was echoed/, @stderr.string)
  ensure
    peer&.kill
    server&.close
  end

  def test_bad_websocket_options_are_usage_errors
    { ["-r", "1..5", "-d", "2"] => "a ws:// URL takes --rate with --duration or -n (per connection), not --stages or a ramp",
      ["-r", "1", "-n", "1", "--http2"] => "a ws:// URL takes neither --http2",
      ["-r", "1", "-n", "1", "--connect-rate", "0"] => "--connect-rate must be positive",
      ["-r", "1", "-n", "1", "--processes", "3", "-c", "2"] => "a ws:// URL needs at least one connection per process" }.each do |args, message|
      assert_equal 2, cli("ws://127.0.0.1:1/", *args), args.inspect
      assert_match(/\Aheron attack: #{Regexp.escape(message)}/, @stderr.string)
    end
  end

  private

  def huge_frame(socket)
    head = socket.gets("\r\n\r\n")
    key = head[/^sec-websocket-key: *(\S+)/i, 1]
    accept = Digest::SHA1.base64digest(key + Heron::Attack::WebSocket::Session::GUID)
    socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: #{accept}\r\n\r\n")
    socket.write([0x81, 127, 10_000_000].pack("CCQ>") + "abc")
  end
end
