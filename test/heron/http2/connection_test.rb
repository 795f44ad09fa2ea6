# frozen_string_literal: true

require "test_helper"
require "open3"
require_relative "../../support/http2_client"
require_relative "../../support/tls_certificates"

# HTTP/2 served by the real server: curl (prior knowledge and ALPN over TLS) and a
# protocol-http2 client over a raw socket, for streams, flow control and the floods.
class HeronHTTP2ConnectionTest < Minitest::Test
  include ServerHelper

  ECHO = lambda do |env|
    sleep(Float(env["QUERY_STRING"][/sleep=([\d.]+)/, 1])) if env["QUERY_STRING"].include?("sleep=")
    body = "#{env['SERVER_PROTOCOL']} #{env['REQUEST_METHOD']} #{env['PATH_INFO']} #{env['rack.url_scheme']} #{env['rack.input'].read.bytesize}"
    [200, { "content-type" => "text/plain" }, [body]]
  end

  def client(port, settings: []) = HTTP2TestClient.new(TCPSocket.new("127.0.0.1", port), settings: settings)

  def curl(*args)
    out, status = Open3.capture2e("curl", "-sS", *args)
    assert status.success?, out
    out
  end

  def test_curl_with_prior_knowledge_and_http_1_1_on_the_same_port
    with_server(ECHO) do |port, _server|
      assert_equal "HTTP/2 POST /a http 5", curl("--http2-prior-knowledge", "-d", "hello", "http://127.0.0.1:#{port}/a")
      assert_equal "HTTP/1.1 GET /b http 0", curl("http://127.0.0.1:#{port}/b")
      assert_match(/\[HTTP2\].*200|GET \/c|HTTP\/2 200/, curl("--http2-prior-knowledge", "-i", "http://127.0.0.1:#{port}/c"))
      assert_match(%r{"GET /a HTTP/2"|HTTP/2}, server_log) # the access log sees HTTP/2 requests
    end
  end

  # Between streams the connection's read waits with no scheduler timer of its own
  # (Server::Parking#kept_wait), then, if that wait ended early, for the rest of
  # keepalive_timeout: an idle connection still closes then, neither sooner nor never.
  def test_an_idle_connection_closes_after_keepalive_timeout_not_before
    with_server(ECHO, keepalive_timeout: 1.5, keepalive_park_after: 0.05) do |port, _server|
      h2 = client(port)
      stream = h2.request("GET", "/idle")
      h2.wait(stream)
      assert_equal "HTTP/2 GET /idle http 0", stream.body
      idle_since = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      assert h2.socket.wait_readable(30), "the idle connection was still open after 30 s"
      idle = Process.clock_gettime(Process::CLOCK_MONOTONIC) - idle_since
      assert_nil h2.socket.read_nonblock(1, exception: false), "the server closed the connection (no frame)"
      assert_operator idle, :>=, 1.4, "closed #{idle.round(2)} s into keepalive_timeout 1.5"
    end
  end

  def test_tls_negotiates_h2_by_alpn
    Dir.mktmpdir do |dir|
      paths = TLSCertificates.make(dir, "localhost")
      bind = "ssl://127.0.0.1:0?cert=#{paths['localhost'][0]}&key=#{paths['localhost'][1]}"
      with_server(ECHO, binds: [bind], environment: "production") do |port, _server|
        url = "https://localhost:#{port}/tls"
        resolve = "localhost:#{port}:127.0.0.1"
        assert_equal "HTTP/2 GET /tls https 0", curl("--http2", "--cacert", paths["ca"], "--resolve", resolve, url)
        assert_equal "HTTP/1.1 GET /tls https 0", curl("--http1.1", "--cacert", paths["ca"], "--resolve", resolve, url)
      end
    end
  end

  def test_async_http_client_over_h2c
    require "async/http"
    with_server(ECHO) do |port, _server|
      endpoint = Async::HTTP::Endpoint.parse("http://127.0.0.1:#{port}", protocol: Async::HTTP::Protocol::HTTP2)
      bodies = Sync do
        client = Async::HTTP::Client.new(endpoint)
        tasks = Array.new(5) { |i| Async { client.post("/ah#{i}", {}, ["x" * i]).read } }
        tasks.map(&:wait).tap { client.close }
      end
      assert_equal(Array.new(5) { |i| "HTTP/2 POST /ah#{i} http #{i}" }, bodies)
    end
  end

  def test_streams_run_concurrently_on_one_connection
    with_server(ECHO) do |port, _server|
      h2 = client(port)
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      streams = Array.new(10) { |i| h2.request("GET", "/s#{i}?sleep=0.5") }
      h2.wait(*streams)
      assert_operator Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, :<, 3.0 # not 10 × 0.5 s
      assert_equal(Array.new(10) { |i| "HTTP/2 GET /s#{i} http 0" }, streams.map(&:body))
      assert_equal ["200"] * 10, streams.map { |s| s.headers.assoc(":status")[1] }
    ensure
      h2&.close
    end
  end

  def test_large_bodies_both_ways_follow_flow_control
    big = lambda do |env|
      [200, {}, ["#{env['rack.input'].read.bytesize}:", "x" * 1_000_000]]
    end
    with_server(big) do |port, _server|
      upload = Random.bytes(300_000)
      out = curl("--http2-prior-knowledge", "--data-binary", "@-", "http://127.0.0.1:#{port}/", stdin_data: upload)
      assert_equal "300000:#{'x' * 1_000_000}", out
    end
  end

  def test_bodiless_responses_carry_no_data
    apps = { "/head" => 200, "/204" => 204, "/304" => 304 }
    app = ->(env) { [apps.fetch(env["PATH_INFO"]), {}, ->(stream) { stream.write("never"); stream.close }] }
    with_server(app, lint: false) do |port, _server|
      h2 = client(port)
      streams = [h2.request("HEAD", "/head"), h2.request("GET", "/204"), h2.request("GET", "/304")]
      h2.wait(*streams)
      assert_equal ["", "", ""], streams.map(&:body)
      assert_equal %w[200 204 304], streams.map { |s| s.headers.assoc(":status")[1] }
    ensure
      h2&.close
    end
  end

  # A whole response goes out as HEADERS and one DATA frame packed by the server itself; when
  # the client's stream window is smaller than the body, the body follows in frames as the
  # client's WINDOW_UPDATEs open it (these once went unheard: the response stalled), and a
  # header block past the client's frame size goes as HEADERS and CONTINUATION frames on the
  # stream (protocol-http2 0.22 sent the CONTINUATION on stream 0: the client failed).
  def test_whole_responses_follow_the_client_window_and_frame_size
    app = ->(env) { [200, { "x-big" => "v" * (env["PATH_INFO"] == "/big-head" ? 20_000 : 1) }, ["b" * 100]] }
    with_server(app, lint: false) do |port, _server|
      h2 = client(port, settings: [[Protocol::HTTP2::Settings::INITIAL_WINDOW_SIZE, 7]])
      h2.client.read_frame until h2.client.local_settings.initial_window_size == 7 # our streams' windows: 7 from the ACK on
      small, big, head = h2.request("GET", "/small"), h2.request("GET", "/big-head"), h2.request("HEAD", "/small")
      h2.wait(small, big, head)
      assert_equal ["b" * 100, "b" * 100, ""], [small, big, head].map(&:body)
      assert_equal 20_000, big.headers.assoc("x-big")[1].bytesize
      assert_equal %w[200 200 200], [small, big, head].map { |s| s.headers.assoc(":status")[1] }
    ensure
      h2&.close
    end
  end

  # A stream's request runs in the fiber that ran the connection's last one when that fiber
  # waits (no task per stream); streams that overlap still get fibers of their own, and no
  # stream task is left once the connection has closed.
  def test_sequential_streams_reuse_a_fiber_and_none_outlives_the_connection
    app = lambda do |env|
      sleep(0.3) if env["PATH_INFO"] == "/slow"
      [200, {}, [Fiber.current.object_id.to_s]]
    end
    with_server(app) do |port, _server|
      h2 = client(port)
      first, second = Array.new(2) { |i| h2.wait(h2.request("GET", "/#{i}")).first.body }
      assert_equal first, second
      slow, fast = h2.request("GET", "/slow"), h2.request("GET", "/fast")
      h2.wait(slow, fast)
      refute_equal slow.body, fast.body
      h2.close
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 10
      sleep 0.05 while stream_tasks.positive? && Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
      assert_equal 0, stream_tasks
    end
  end

  def stream_tasks = ObjectSpace.each_object(Async::Task).count { |task| task.alive? && task.annotation == "heron http2 stream" }

  # HTTP/2 sends the app's headers by the HTTP/1 writer's rules: any case (sent lower-case, as
  # HTTP/2 requires), one field per Array item or Rack 2 newline-joined part, the connection
  # fields and Rack's `rack.` names left out, and CR or NUL in a value a 500 naming the header.
  def test_response_headers_follow_the_http1_rules
    headers = {
      "/liberal" => { "Content-Type" => "text/plain", "Set-Cookie" => "a=1\nb=2", "x-list" => %w[1 2], "Keep-Alive" => "timeout=5", "Connection" => "close", "rack.note" => "internal" },
      "/split" => { "x-evil" => "a\r\nset-cookie: stolen=1" }
    }
    app = ->(env) { [200, headers.fetch(env["PATH_INFO"]), ["ok"]] }
    with_server(app, lint: false) do |port, _server|
      h2 = client(port)
      liberal, split = h2.request("GET", "/liberal"), h2.request("GET", "/split")
      h2.wait(liberal, split)
      fields = liberal.headers.reject { |name, _| %w[:status date x-request-id].include?(name) }
      assert_equal [["content-type", "text/plain"], ["set-cookie", "a=1"], ["set-cookie", "b=2"], ["x-list", "1"], ["x-list", "2"]], fields
      assert_equal "500", split.headers.assoc(":status")[1]
      refute split.headers.any? { |name, _| name == "set-cookie" }
    ensure
      h2&.close
    end
  end

  def test_streaming_and_file_bodies
    file = Tempfile.new("h2")
    file.write("from a file")
    file.flush
    app = lambda do |env|
      next [200, {}, Rack::Files.new(File.dirname(file.path)).call(env.merge("PATH_INFO" => "/#{File.basename(file.path)}"))[2]] if env["PATH_INFO"] == "/file"
      [200, {}, ->(stream) { stream.write("streamed "); stream.write("body"); stream.close }]
    end
    with_server(app, lint: false) do |port, _server|
      h2 = client(port)
      streams = [h2.request("GET", "/stream"), h2.request("GET", "/file")]
      h2.wait(*streams)
      assert_equal ["streamed body", "from a file"], streams.map(&:body)
    ensure
      h2&.close
      file.close!
    end
  end

  def test_malformed_requests_are_reset_and_the_connection_goes_on
    with_server(ECHO) do |port, _server|
      h2 = client(port)
      bad = h2.request("GET", "/bad", headers: [["connection", "keep-alive"]])
      good = h2.request("GET", "/good")
      h2.wait(bad, good)
      assert_equal Protocol::HTTP2::PROTOCOL_ERROR, bad.reset_code
      assert_equal "HTTP/2 GET /good http 0", good.body
    ensure
      h2&.close
    end
  end

  # A request's HEADERS frame is read without a Frame object only when it opens a new
  # client stream (HTTP2::Session#request?): one on a stream id the client may not open (even,
  # 0, not above the last one, RFC 9113 §5.1.1) still ends the connection with PROTOCOL_ERROR.
  def test_headers_on_a_stream_id_the_client_may_not_open_end_the_connection
    with_server(ECHO) do |port, _server|
      [[1, 2], [5, 3], [3, 3], [1, 0]].each do |first, bad|
        h2 = client(port)
        ((first + 1) / 2).times { h2.wait(h2.request("GET", "/first")) } # streams 1, 3, ... up to `first`
        h2.write(raw_headers(h2, bad))
        assert_equal Protocol::HTTP2::PROTOCOL_ERROR, h2.goaway_code, "HEADERS on stream #{bad} after stream #{first}"
      ensure
        h2&.close
      end
    end
  end

  # A request's HEADERS frame on stream `id`, packed by the client's HPACK context.
  def raw_headers(h2, id)
    frame = Protocol::HTTP2::HeadersFrame.new(id, Protocol::HTTP2::END_STREAM)
    frame.pack(h2.client.encode_headers([[":method", "GET"], [":scheme", "http"], [":authority", "localhost"], [":path", "/bad"]]))
    frame
  end

  # Each response's x-request-id is new: indexed, it would fill the client's HPACK table (and
  # the server's) with values never seen again, evicting the fields that do repeat.
  def test_fields_unique_to_each_response_are_not_indexed
    with_server(ECHO) do |port, _server|
      h2 = client(port)
      streams = Array.new(20) { |i| h2.wait(h2.request("GET", "/u#{i}")).first }
      ids = streams.map { |stream| stream.headers.to_h.fetch("x-request-id") }
      assert_equal 20, ids.uniq.size
      assert_equal(Array.new(20) { |i| "HTTP/2 GET /u#{i} http 0" }, streams.map(&:body))
      table = h2.client.instance_variable_get(:@decoder).table
      assert_empty table.select { |name, _| name == "x-request-id" }, table.inspect
      assert_includes table.map(&:first), "content-type" # the repeating fields still are
    ensure
      h2&.close
    end
  end

  def test_rapid_reset_ends_the_connection_and_apps_never_pile_up
    running = Queue.new
    app = ->(_env) { running << 1; sleep 0.2; [200, {}, ["ok"]] }
    with_server(app, http2_max_concurrent_streams: 10) do |port, _server|
      h2 = client(port)
      begin
        500.times do
          stream = h2.request("GET", "/")
          stream.send_reset_stream(Protocol::HTTP2::CANCEL)
        end
      rescue Errno::EPIPE, Errno::ECONNRESET, IOError
        nil # the server may end the connection before the client stops sending
      end
      assert_equal Protocol::HTTP2::ENHANCE_YOUR_CALM, h2.goaway_code
      assert_operator running.size, :<=, 10 + 1 # refused past the limit while apps still ran
      assert_equal "HTTP/2 GET / http 0".sub(/.*/, "ok"), curl("--http2-prior-knowledge", "http://127.0.0.1:#{port}/")
    ensure
      h2&.close
    end
  end

  def test_continuation_flood_ends_the_connection
    with_server(ECHO) do |port, _server|
      h2 = client(port)
      headers = Protocol::HTTP2::HeadersFrame.new(1, 0) # no END_HEADERS
      headers.pack(h2.client.encode_headers([[":method", "GET"], [":scheme", "http"], [":path", "/"]]))
      headers.clear_flags(Protocol::HTTP2::END_HEADERS) # pack sets it when the block fits
      h2.write(headers)
      100.times do
        continuation = Protocol::HTTP2::ContinuationFrame.new(1, 0)
        continuation.pack("")
        continuation.clear_flags(Protocol::HTTP2::END_HEADERS)
        h2.write(continuation)
      end
      assert_equal Protocol::HTTP2::ENHANCE_YOUR_CALM, h2.goaway_code
    ensure
      h2&.close
    end
  end

  def test_ping_and_settings_floods_end_the_connection
    with_server(ECHO) do |port, _server|
      [-> { Protocol::HTTP2::PingFrame.new.tap { |f| f.pack("12345678") } },
       -> { Protocol::HTTP2::SettingsFrame.new.tap { |f| f.pack([]) } }].each do |make|
        h2 = client(port)
        200.times { h2.write(make.call) }
        assert_equal Protocol::HTTP2::ENHANCE_YOUR_CALM, h2.goaway_code
        h2.close
      end
    end
  end

  def test_an_hpack_bomb_ends_the_connection
    with_server(ECHO, max_header_bytes: 16 * 1024) do |port, _server|
      h2 = client(port)
      big = [["x-big", "a" * 4000]]
      fields = [[":method", "GET"], [":scheme", "http"], [":path", "/"]] + big * 100 # indexed after the first
      frame = Protocol::HTTP2::HeadersFrame.new(1, Protocol::HTTP2::END_STREAM | Protocol::HTTP2::END_HEADERS)
      frame.pack(h2.client.encode_headers(fields))
      assert_operator frame.length, :<, 16 * 1024 # small on the wire
      h2.write(frame)
      assert_equal Protocol::HTTP2::ENHANCE_YOUR_CALM, h2.goaway_code
    ensure
      h2&.close
    end
  end

  def test_a_graceful_stop_sends_goaway_and_lets_open_streams_finish
    entered = Thread::Queue.new
    server = start_server(->(env) { entered << env["PATH_INFO"]; ECHO.call(env) })
    h2 = client(server.bound_ports.first)
    slow = h2.request("GET", "/slow?sleep=0.5")
    # The stop comes once the app has the stream (a fixed sleep could be outlasted, and a stream
    # the server had not read yet is not an open stream).
    eventually { !entered.empty? }
    server.stop(graceful: true)
    h2.wait(slow)
    assert_equal "HTTP/2 GET /slow http 0", slow.body
  ensure
    h2&.close
    stop_server(server, graceful: true) if server
  end
end
