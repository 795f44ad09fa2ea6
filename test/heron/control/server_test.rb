# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "heron/control"

class ControlServerTest < Minitest::Test
  Endpoints = Struct.new(:calls) do
    def call(method, target, headers, _local = nil)
      calls << [method, target, headers]
      return [400, {}, "bad\n"] unless method
      [200, { "content-type" => "text/plain" }, "#{method} #{target}\n"]
    end
  end

  def setup
    @log = StringIO.new
    @logger = Heron::Log::Logger.new(Heron::Configuration.new(log_io: @log, error_io: @log))
    @endpoints = Endpoints.new([])
  end

  def teardown
    @servers&.each(&:close)
  end

  def test_answers_over_tcp_and_passes_method_target_and_lowercased_headers
    server = start("tcp://127.0.0.1:0")
    status, headers, body = exchange(server.port, "GET /stats?x=1 HTTP/1.1\r\nAuthorization: Bearer t\r\n\r\n")
    assert_equal [200, "GET /stats?x=1\n", "close"], [status, body, headers["connection"]]
    assert_equal ["GET", "/stats?x=1", { "authorization" => "Bearer t" }], @endpoints.calls.last
    assert_equal "tcp://127.0.0.1:#{server.port}", server.url
  end

  def test_head_gets_no_body_and_garbage_is_a_400
    server = start("tcp://127.0.0.1:0")
    status, headers, body = exchange(server.port, "HEAD /x HTTP/1.1\r\n\r\n", head: true)
    assert_equal [200, ""], [status, body]
    assert_equal "8", headers["content-length"]
    assert_equal 400, exchange(server.port, "hello\r\n\r\n").first
  end

  # The old metrics server took one connection at a time, so three idle sockets held a scrape
  # for 3 x 5 s. Here the scrape is answered while the idle sockets are still open.
  def test_idle_sockets_do_not_hold_up_a_scrape
    server = start("tcp://127.0.0.1:0")
    idle = Array.new(3) { TCPSocket.new("127.0.0.1", server.port) }
    idle.each { |socket| socket.write("GET /half") } # a head that never ends
    assert_equal 200, exchange(server.port, "GET /metrics HTTP/1.1\r\n\r\n").first
    idle.each { |socket| refute socket.wait_readable(0), "an idle socket was answered or closed first" }
  ensure
    idle&.each(&:close)
  end

  # 64 silent sockets used to hold a probe for 10 s (32 slots x 5 s each); a kubelet gives up
  # after 1 s. Here a thousand sit open and the probe is still answered, well inside 2 s.
  def test_a_thousand_silent_connections_do_not_hold_up_a_probe
    soft, hard = Process.getrlimit(Process::RLIMIT_NOFILE)
    skip "needs 2,100 descriptors (both ends live here); the hard limit is #{hard}" if hard < 2100
    Process.setrlimit(Process::RLIMIT_NOFILE, [4096, hard].min, hard) if soft < 4096
    server = start("tcp://127.0.0.1:0")
    silent = Array.new(1000) { TCPSocket.new("127.0.0.1", server.port) }
    probe = TCPSocket.new("127.0.0.1", server.port)
    probe.write("GET /health/live HTTP/1.1\r\n\r\n")
    assert probe.wait_readable(2), "the probe was not answered within 2 s"
    assert_equal 200, read_response(probe).first
    refute silent.last.wait_readable(0), "the newest silent socket was dropped, not the oldest"
  ensure
    probe&.close
    silent&.each(&:close)
  end

  def test_a_client_that_never_finishes_its_head_is_dropped_at_the_deadline
    stub_const(:CLIENT_TIMEOUT, 0.2) do
      server = start("tcp://127.0.0.1:0")
      socket = TCPSocket.new("127.0.0.1", server.port)
      socket.write("GET / HTTP/1.1\r\n")
      assert closed_by_server?(socket, timeout: 5)
      assert_equal 200, exchange(server.port, "GET / HTTP/1.1\r\n\r\n").first
    ensure
      socket&.close
    end
  end

  def test_a_head_over_the_limit_is_refused
    server = start("tcp://127.0.0.1:0")
    status, = exchange(server.port, "GET / HTTP/1.1\r\nx: #{'a' * 9000}\r\n\r\n")
    assert_equal 400, status
    assert_equal [nil, nil, {}], @endpoints.calls.last
  end

  def test_a_taken_address_falls_back_to_a_free_port_with_one_log_line
    taken = TCPServer.new("127.0.0.1", 0)
    server = start("tcp://127.0.0.1:#{taken.addr[1]}")
    refute_equal taken.addr[1], server.port
    assert_equal 200, exchange(server.port, "GET / HTTP/1.1\r\n\r\n").first
    lines = @log.string.lines.grep(/control listener/)
    assert_equal 1, lines.size
    assert_includes lines.first, "tcp://127.0.0.1:#{taken.addr[1]} is in use; listening on #{server.url} instead"
  ensure
    taken&.close
  end

  def test_an_address_that_cannot_be_opened_is_one_line_and_no_listener
    server = start("tcp://192.0.2.1:0") # TEST-NET-1: not an address of this machine
    assert_nil server.url
    assert_nil server.port
    assert_match(/control listener tcp:\/\/192\.0\.2\.1:0 cannot be opened .* running without it/, @log.string)
  end

  def test_unix_socket_and_close_removes_it
    path = File.join(Dir.mktmpdir("heron-control"), "control.sock")
    server = start("unix://#{path}")
    assert_equal "unix://#{path}", server.url
    socket = UNIXSocket.new(path)
    socket.write("GET /health/live HTTP/1.1\r\n\r\n")
    assert_equal 200, read_response(socket).first
    server.close
    refute File.exist?(path)
  ensure
    socket&.close
  end

  def test_a_stale_unix_socket_file_is_replaced_and_a_live_one_is_not
    path = File.join(Dir.mktmpdir("heron-control"), "control.sock")
    UNIXServer.new(path).close # what a killed process leaves behind
    assert File.socket?(path)
    server = start("unix://#{path}")
    assert_equal "unix://#{path}", server.url
    second = start("unix://#{path}")
    assert_nil second.url
    assert_match(/control listener unix:\/\/#{Regexp.escape(path)} is in use .* running without it/, @log.string)
    second.close
    socket = UNIXSocket.new(path) # the failed one did not delete the live one's file
    socket.write("GET / HTTP/1.1\r\n\r\n")
    assert_equal 200, read_response(socket).first
  ensure
    socket&.close
  end

  private

  def start(uri)
    server = Heron::Control::Server.new(uri, @endpoints, @logger).start
    (@servers ||= []) << server
    server
  end

  def exchange(port, request, head: false)
    socket = TCPSocket.new("127.0.0.1", port)
    socket.write(request)
    read_response(socket, head: head)
  ensure
    socket&.close
  end

  def stub_const(name, value)
    klass = Heron::Control::Server
    old = klass.send(:remove_const, name)
    klass.const_set(name, value)
    yield
  ensure
    klass.send(:remove_const, name)
    klass.const_set(name, old)
  end
end
