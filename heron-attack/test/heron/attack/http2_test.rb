# frozen_string_literal: true

require "test_helper"
require "stringio"
require "heron/attack"
require "support/tls_certificates"
require_relative "support/h2_nginx"
require_relative "support/raw_peer"

# `heron attack --http2` against real servers over real sockets: Heron (h2c with prior knowledge,
# h2 over TLS by ALPN) and nginx (h2c and h2), counting connections and streams on the server.
class AttackHTTP2Test < Minitest::Test
  include ServerHelper
  include H2Nginx
  include RawPeer

  # Answers with the protocol, scheme, method and body size, after `delay` seconds; keeps the
  # peak number of requests in flight and of connections open on the server (given as #server).
  class App
    attr_reader :peak, :connections, :served
    attr_accessor :server

    def initialize(delay: 0)
      @delay = delay
      @in_flight = @peak = @connections = @served = 0
      @lock = Mutex.new
    end

    def call(env)
      @lock.synchronize do
        @peak = [@peak, @in_flight += 1].max
        @connections = [@connections, @server.connection_count].max
      end
      sleep(@delay) if @delay.positive?
      body = "#{env['SERVER_PROTOCOL']} #{env['rack.url_scheme']} #{env['REQUEST_METHOD']} #{env['rack.input'].read.bytesize}"
      [200, { "content-type" => "text/plain", "content-length" => body.bytesize.to_s }, [body]]
    ensure
      @lock.synchronize do
        @in_flight -= 1
        @served += 1
      end
    end
  end

  def with_app_server(app, **config)
    with_server(app, lint: false, **config) do |port, server|
      app.server = server
      yield port
    end
  end

  def setup
    @dir = Dir.mktmpdir
  end

  def teardown
    FileUtils.rm_rf(@dir)
  end

  def cli(*argv)
    @stdout = StringIO.new
    @stderr = StringIO.new
    @json = File.join(@dir, "run.json")
    status = Heron::Attack::CLI.new([*argv, "--json", @json], stdout: @stdout, stderr: @stderr).run
    @report = File.exist?(@json) ? Heron::Attack::JsonReport.load(@json) : nil
    status
  end

  def test_h2c_spreads_requests_over_the_connections_and_reports_like_http1
    app = App.new
    with_app_server(app) do |port|
      assert_equal 0, cli("http://127.0.0.1:#{port}/", "--http2", "-r", "200", "-n", "60", "-c", "3", "--per-request"), @stderr.string
      assert_equal({ "200" => 60 }, @report["status_codes"])
      assert_equal 3, app.connections, "three connections, no more"
      assert_equal 60, app.served
      assert_equal "h2", @report["plan"]["protocol"]
      assert_equal 60 * "HTTP/2 http GET 0".bytesize, @report["bytes"]["in"]
      assert_operator @report["latency_ms"]["corrected"]["p50"], :>, 0
      assert_equal 60, @stdout.string.scan(/^request \d+ status=200 latency=/).size
      assert_match(/HTTP\/2, 3 connections x 100 streams/, @stdout.string)
    end
  end

  def test_several_processes_share_the_connections
    app = App.new
    with_app_server(app) do |port|
      assert_equal 0, cli("http://127.0.0.1:#{port}/", "--http2", "-r", "200", "-n", "40", "-c", "2", "--processes", "2"), @stderr.string
      assert_equal({ "200" => 40 }, @report["status_codes"])
      assert_equal 2, app.connections, "one connection per process"
    end
  end

  def test_h2c_sends_bodies_and_headers
    app = App.new
    body = "x" * 100_000 # more than the 65,535-byte initial window: sent as the server opens it
    File.write(File.join(@dir, "body"), body)
    with_app_server(app) do |port|
      assert_equal 0, cli("http://127.0.0.1:#{port}/", "--http2", "-X", "POST", "--body-file", File.join(@dir, "body"),
                          "-H", "Host: example.test", "-r", "50", "-n", "4"), @stderr.string
      assert_equal 4 * "HTTP/2 http POST 100000".bytesize, @report["bytes"]["in"]
      assert_equal 400_000, @report["bytes"]["out"]
    end
  end

  def test_max_streams_caps_requests_at_once_on_a_connection
    app = App.new(delay: 0.3)
    with_app_server(app, threads: 20) do |port|
      assert_equal 0, cli("http://127.0.0.1:#{port}/", "--http2", "-r", "1000", "-n", "12", "--max-streams", "3"), @stderr.string
      assert_equal({ "200" => 12 }, @report["status_codes"])
      assert_equal 1, app.connections
      assert_operator app.peak, :<=, 3
      # The requests that waited for a stream were late: four rounds of 0.3 s.
      assert_operator @report["lateness_ms"]["max"], :>=, 800
    end
  end

  # Against Heron's http2_max_concurrent_streams 2, with --max-streams 50: every request is served.
  def test_a_server_with_fewer_streams_serves_every_request
    app = App.new(delay: 0.2)
    with_app_server(app, threads: 20, http2_max_concurrent_streams: 2) do |port|
      assert_equal 0, cli("http://127.0.0.1:#{port}/", "--http2", "-r", "1000", "-n", "10", "--max-streams", "50"), @stderr.string
      assert_equal({ "200" => 10 }, @report["status_codes"], @report["error_samples"].inspect)
      assert_operator app.peak, :<=, 2
    end
  end

  # A server whose SETTINGS allow 2 streams and that never answers: of 10 requests due at once
  # (--max-streams 50), the client opens 2 streams, and no more until timeouts cancel them.
  def test_the_servers_max_concurrent_streams_is_respected
    server = TCPServer.new("127.0.0.1", 0)
    opened = Queue.new
    peer = raw_peer(server) { |socket| count_streams_until_reset(socket, opened) }
    assert_equal 4, cli("http://127.0.0.1:#{server.addr[1]}/", "--http2", "-r", "1000", "-n", "10", "--max-streams", "50", "--timeout", "1")
    assert_equal 2, Timeout.timeout(ProcessHelper::PATIENCE) { opened.pop }
    assert_equal 10, @report["errors"]["timeout"]
  ensure
    peer&.kill
    server&.close
  end

  def test_h2_over_tls_by_alpn_against_heron
    paths = TLSCertificates.make(@dir, "localhost")
    cert, key = paths["localhost"]
    app = App.new
    with_app_server(app, binds: ["ssl://127.0.0.1:0?#{URI.encode_www_form(cert: cert, key: key)}"]) do |port|
      assert_equal 0, cli("https://localhost:#{port}/", "--http2", "-r", "100", "-n", "20", "-c", "2", "--cacert", paths["ca"]), @stderr.string
      assert_equal({ "200" => 20 }, @report["status_codes"])
      assert_equal 20 * "HTTP/2 https GET 0".bytesize, @report["bytes"]["in"]
      assert_equal 2, app.connections
    end
  end

  # Heron without HTTP/2 ends the handshake when h2 is the only protocol offered.
  def test_a_tls_server_that_does_not_agree_to_h2_fails_every_request_with_the_reason
    paths = TLSCertificates.make(@dir, "localhost")
    cert, key = paths["localhost"]
    with_server(App.new, lint: false, http2: false, binds: ["ssl://127.0.0.1:0?#{URI.encode_www_form(cert: cert, key: key)}"]) do |port|
      assert_equal 4, cli("https://localhost:#{port}/", "--http2", "-r", "100", "-n", "3", "--cacert", paths["ca"])
      assert_match(/no application protocol/, @report["error_samples"].keys.join)
    end
  end

  def test_h2c_and_h2_against_nginx
    with_h2_nginx(@dir) do |h2c_port, tls_port, ca|
      assert_equal 0, cli("http://127.0.0.1:#{h2c_port}/", "--http2", "-r", "200", "-n", "40", "-c", "2"), @stderr.string
      assert_equal({ "200" => 40 }, @report["status_codes"])
      assert_equal 40 * 5, @report["bytes"]["in"]
      assert_equal 0, cli("https://localhost:#{tls_port}/", "--http2", "-r", "200", "-n", "40", "--cacert", ca), @stderr.string
      assert_equal({ "200" => 40 }, @report["status_codes"])
      assert_equal 80, File.read(File.join(@dir, "access.log")).scan(%r{"GET / HTTP/2\.0" 200}).size
    end
  end

  # nginx sends GOAWAY after keepalive_requests requests on a connection; the streams above its
  # last stream id were not processed, and go again on a new connection.
  def test_requests_a_goaway_left_unprocessed_go_again_on_a_new_connection
    with_h2_nginx(@dir, http: "keepalive_requests 5;") do |h2c_port, _, _|
      assert_equal 0, cli("http://127.0.0.1:#{h2c_port}/", "--http2", "-r", "1000", "-n", "100", "--timeout", "10"), @stderr.string
      assert_equal({ "200" => 100 }, @report["status_codes"], @report["error_samples"].inspect)
      assert_equal 100, File.read(File.join(@dir, "access.log")).scan(%r{"GET / HTTP/2\.0" 200}).size
    end
  end

  # nginx answers 413 to a body over client_max_body_size before reading it, then resets the
  # stream (NO_ERROR): the response counts, and the rest of the body is not sent.
  def test_a_response_that_comes_before_the_whole_body_counts
    body = File.join(@dir, "body")
    File.binwrite(body, "x" * 1_000_000)
    with_h2_nginx(@dir, http: "client_max_body_size 10k;") do |h2c_port, _, _|
      assert_equal 4, cli("http://127.0.0.1:#{h2c_port}/", "--http2", "-X", "POST", "--body-file", body, "-r", "20", "-n", "6", "--timeout", "10")
      assert_equal({ "413" => 6 }, @report["status_codes"], @report["error_samples"].inspect)
      assert_operator @report["bytes"]["in"], :>, 0
    end
  end

  # A server that answers with a HEADERS frame and CONTINUATION frames without end: the request
  # fails once the header block passes its bounds, instead of the client reading on.
  def test_a_header_block_without_end_fails_the_request
    server = TCPServer.new("127.0.0.1", 0)
    peer = raw_peer(server) { |socket| continuation_flood(socket) }
    assert_equal 4, cli("http://127.0.0.1:#{server.addr[1]}/", "--http2", "-r", "10", "-n", "1", "--timeout", "20")
    assert_match(/ProtocolError: a header block larger than/, @report["error_samples"].keys.join)
    assert_operator @report["latency_ms"]["corrected"]["max"], :<, 1, "no response was timed"
  ensure
    peer&.kill
    server&.close
  end

  def test_bad_http2_options_are_usage_errors
    { ["--max-streams", "0"] => "--max-streams must be a positive integer",
      ["--max-streams", "10001"] => "--max-streams must be at most 10000",
      ["--no-keepalive"] => "--no-keepalive does not apply to --http2",
      ["--processes", "2"] => "--http2 needs at least one connection per process" }.each do |extra, message|
      assert_equal 2, cli("http://127.0.0.1:1/", "--http2", "-r", "1", "-n", "1", *extra), extra.inspect
      assert_match(/\Aheron attack: #{Regexp.escape(message)}/, @stderr.string)
    end
  end

  private

  # Reads the client's preface, sends SETTINGS, then for stream 1 a HEADERS frame without
  # END_HEADERS and 1 KiB CONTINUATION frames until the client goes away.
  def continuation_flood(socket)
    socket.readpartial(4096)
    socket.write(h2_frame(4, 0, 0, ""))
    socket.readpartial(4096) # the client's SETTINGS acknowledgement or its request
    socket.write(h2_frame(1, 0, 1, "\x88".b))
    loop { socket.write(h2_frame(9, 0, 1, "\x88".b * 1024)) }
  end

  # Sends SETTINGS with MAX_CONCURRENT_STREAMS 2, then counts the HEADERS frames (new streams)
  # the client sends before its first RST_STREAM, and pushes the count.
  def count_streams_until_reset(socket, opened)
    socket.read(24) # the preface
    socket.write(h2_frame(4, 0, 0, [3, 2].pack("nN")))
    count = 0
    loop do
      length, type = socket.read(9).unpack("a3C").then { |len, t| [("\0#{len}").unpack1("N"), t] }
      socket.read(length)
      break if type == 3
      count += 1 if type == 1
    end
    opened << count
  end

  def h2_frame(type, flags, stream, payload)
    [payload.bytesize].pack("N")[1, 3] + [type, flags, stream].pack("CCN") + payload
  end
end
