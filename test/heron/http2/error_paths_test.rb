# frozen_string_literal: true

require "test_helper"
require "open3"
require_relative "../../support/http2_client"

# What ends an HTTP/2 stream, or connection, that went wrong, over a real h2c connection to the
# real server: a body that raises, a client that stops reading or sending, a preface or header
# block dripped a byte at a time, more streams than the limit.
class HeronHTTP2ErrorPathsTest < Minitest::Test
  # keepalive_timeout long enough that an idle-out can never pass for the reset being tested.
  PATIENT = { keepalive_timeout: 120, first_byte_timeout: 120 }.freeze

  # A body that sends a chunk, then fails.
  class BrokenBody
    def each
      yield "first chunk"
      raise "the body broke"
    end
  end

  def client(port, settings: []) = HTTP2TestClient.new(TCPSocket.new("127.0.0.1", port), settings: settings)

  def test_a_body_raising_after_its_first_chunk_resets_the_stream_at_once_with_one_log_line
    app = ->(env) { [200, {}, env["PATH_INFO"] == "/broken" ? BrokenBody.new : ["ok"]] }
    with_server(app, lint: false, **PATIENT) do |port, _server|
      h2 = client(port)
      broken = h2.request("GET", "/broken")
      h2.wait(broken, timeout: 30)
      assert_equal Protocol::HTTP2::INTERNAL_ERROR, broken.reset_code
      assert_equal "first chunk", broken.body
      assert_equal 1, server_log.scan("response body raised on GET /broken").size, server_log
      refute_match(/NameError/, server_log)
      assert_equal "ok", finished_request(h2).body, "the connection goes on"
      nghttp_sees_the_reset(port) if system("command -v nghttp >/dev/null")
    ensure
      h2&.close
    end
  end

  def test_a_stream_stalled_at_a_closed_window_is_reset_after_write_timeout_without_backtraces
    app = ->(_env) { [200, {}, ["x" * 1000]] }
    with_server(app, lint: false, write_timeout: 1, **PATIENT) do |port, _server|
      h2 = client(port, settings: [[Protocol::HTTP2::Settings::INITIAL_WINDOW_SIZE, 0]])
      stalled = h2.request("GET", "/stalled")
      h2.wait(stalled, timeout: 30)
      assert_equal "200", stalled.headers.assoc(":status")&.last
      assert_equal Protocol::HTTP2::CANCEL, stalled.reset_code
      assert_equal "", stalled.body
      refute_match(/NameError|\.rb:\d+/, server_log)
    ensure
      h2&.close
    end
  end

  # A client whose windows are open but who stops reading the socket: once a write has waited
  # write_timeout the connection closes (a frame may be half written), not just the stream.
  def test_a_client_that_stops_reading_the_socket_loses_the_connection_after_write_timeout
    stopped = Thread::Queue.new
    body = Enumerator.new do |out|
      256.times { out << ("x" * 1024 * 1024) }
    ensure
      stopped << true
    end
    with_server(->(_env) { [200, {}, body] }, lint: false, write_timeout: 1, **PATIENT) do |port, _server|
      h2 = client(port, settings: [[Protocol::HTTP2::Settings::INITIAL_WINDOW_SIZE, 0x7fffffff]])
      h2.write(Protocol::HTTP2::WindowUpdateFrame.new(0).tap { |frame| frame.pack(0x7fffffff - 65_535) })
      h2.request("GET", "/big")
      stopped.pop # the body stopped: a write timed out, the client having read nothing
      received = read_all(h2.socket, timeout: 60)
      assert closed_by_server?(h2.socket, timeout: 1), "the connection stayed open after #{received.bytesize} bytes"
      assert_operator received.bytesize, :<, 256 * 1024 * 1024
      refute_match(/\.rb:\d+/, server_log)
    ensure
      h2&.close
    end
  end

  # The app's read raises Heron::TimeoutError over both protocols (a 408 unless it rescues),
  # and over HTTP/2 the stream whose body never ended is reset once the response is out.
  def test_a_stalled_request_body_raises_the_http1_timeout_in_the_app_and_the_stream_is_reset
    seen = Thread::Queue.new
    app = lambda do |env|
      env["rack.input"].read
      [200, {}, ["read it all"]]
    rescue StandardError => e
      seen << e.class
      raise
    end
    with_server(app, lint: false, body_timeout: 1, **PATIENT) do |port, _server|
      h2 = client(port)
      upload = h2.request("POST", "/upload", body: "the start", finish: false)
      h2.wait(upload, timeout: 30)
      assert_equal Heron::TimeoutError, seen.pop
      assert_equal "408", upload.headers.assoc(":status")&.last
      assert_equal Protocol::HTTP2::NO_ERROR, upload.reset_code

      http1 = connect(port)
      http1.write("POST /upload HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n9\r\nthe start\r\n")
      assert_equal 408, read_response(http1).first
      assert_equal Heron::TimeoutError, seen.pop, "the same error over HTTP/1.1"
    ensure
      h2&.close
      http1&.close
    end
  end

  def test_a_dripped_preface_is_held_to_header_timeout_in_all
    with_server(->(_env) { [200, {}, ["ok"]] }, header_timeout: 1, **PATIENT) do |port, _server|
      socket = connect(port)
      preface = Protocol::HTTP2::CONNECTION_PREFACE.bytes
      sent = drip(socket, preface.size, 0.4) { |i| socket.write(preface[i].chr) }
      refute_nil sent, "the server never closed the connection"
      assert_operator sent, :<, preface.size, "closed only once the whole preface was in"
    ensure
      socket&.close
    end
  end

  def test_a_header_block_dripped_in_continuation_frames_is_held_to_header_timeout_in_all
    with_server(->(_env) { [200, {}, ["ok"]] }, header_timeout: 1, **PATIENT) do |port, _server|
      h2 = client(port)
      headers = Protocol::HTTP2::HeadersFrame.new(1, 0)
      headers.pack(h2.client.encode_headers([[":method", "GET"], [":scheme", "http"], [":path", "/"]]))
      headers.clear_flags(Protocol::HTTP2::END_HEADERS)
      h2.write(headers)
      drips = Heron::HTTP2::HeaderBlock::MAX_CONTINUATIONS - 4 # under the CONTINUATION flood limit
      sent = drip(h2.socket, drips, 0.4) do
        continuation = Protocol::HTTP2::ContinuationFrame.new(1, 0)
        continuation.pack("")
        continuation.clear_flags(Protocol::HTTP2::END_HEADERS)
        h2.write(continuation)
      end
      refute_nil sent, "the server never closed the connection"
      assert_operator sent, :<, drips
    ensure
      h2&.close
    end
  end

  # RFC 9113 §5.1.2: a stream past SETTINGS_MAX_CONCURRENT_STREAMS is refused on its own; the
  # streams in flight finish.
  def test_streams_past_the_limit_are_refused_and_those_in_flight_finish
    entered = Thread::Queue.new
    release = Thread::Queue.new
    app = ->(env) { entered << 1; release.pop; [200, {}, [env["PATH_INFO"]]] }
    with_server(app, http2_max_concurrent_streams: 2, **PATIENT) do |port, _server|
      h2 = client(port)
      running = [h2.request("GET", "/one"), h2.request("GET", "/two")]
      2.times { entered.pop }
      refused = h2.request("GET", "/three")
      h2.wait(refused, timeout: 30)
      assert_equal Protocol::HTTP2::REFUSED_STREAM, refused.reset_code
      2.times { release << true }
      h2.wait(*running, timeout: 30)
      assert_equal ["/one", "/two"], running.map(&:body)
      release << true
      assert_equal "/again", h2.wait(h2.request("GET", "/again"), timeout: 30).first.body, "the connection goes on"
    ensure
      h2&.close
    end
  end

  private

  # nghttp (nghttp2's client) gets the first chunk, then RST_STREAM INTERNAL_ERROR, and exits.
  def nghttp_sees_the_reset(port)
    out, = Open3.capture2e("timeout", "30", "nghttp", "-v", "http://127.0.0.1:#{port}/broken")
    assert_match(/recv DATA frame <length=11, flags=0x00, stream_id=\d+>/, out)
    assert_match(/recv RST_STREAM frame <length=4, flags=0x00, stream_id=\d+>\s+\(error_code=INTERNAL_ERROR\(0x02\)\)/, out)
  end

  def finished_request(h2)
    h2.wait(h2.request("GET", "/ok"), timeout: 30).first
  end

  # Yields `count` times, `interval` apart, to send a piece; reads (and drops) what the server
  # sends meanwhile.
  # @return [Integer, nil] how many pieces were sent when the server closed; nil if it never did.
  def drip(socket, count, interval)
    sent = 0
    count.times do
      yield sent
      sent += 1
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + interval
      while (left = deadline - Process.clock_gettime(Process::CLOCK_MONOTONIC)).positive? && socket.wait_readable(left)
        return sent if socket.read_nonblock(65_536, exception: false).nil?
      end
    end
    nil
  rescue Errno::EPIPE, Errno::ECONNRESET
    sent
  end
end
