# frozen_string_literal: true

require "test_helper"

# Connection::RequestReader over a real socket pair and the real parser, outside the fiber
# scheduler (the socket's waits block the thread here): what it reads off the wire and what the
# app would be given.
class HeronConnectionRequestReaderTest < Minitest::Test
  RequestReader = Heron::Connection::RequestReader
  APP = ->(_env) { [200, {}, []] }

  def setup
    @ours, @peer = UNIXSocket.pair
    @rejected = []
  end

  def teardown
    [@ours, @peer].each { |io| io.close unless io.closed? }
  end

  def test_a_request_is_read_with_its_env_body_and_hijack_callable
    hijack = -> {}
    reader = reader(hijack: hijack)
    @peer.write("POST /items?x=1 HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\n\r\nhello")
    request = reader.read_request(now)
    env = request.env
    assert_equal %w[POST /items x=1 example.com], env.values_at("REQUEST_METHOD", "PATH_INFO", "QUERY_STRING", "SERVER_NAME")
    assert_equal "hello", env["rack.input"].read
    assert_same hijack, env["rack.hijack"]
    assert request.keepalive && request.http11?, "an HTTP/1.1 request without Connection: close keeps the connection"
    assert_same request, reader.request
  end

  def test_pipelined_requests_are_read_in_turn_each_with_its_own_env
    reader = reader()
    @peer.write("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.0\r\nHost: x\r\n\r\n")
    first = reader.read_request(now)
    assert_equal "/a", first.env["PATH_INFO"]
    reader.finish(true)
    second = reader.read_request(now)
    assert_equal ["/b", false], [second.env["PATH_INFO"], second.keepalive]
    assert_equal "/a", first.env["PATH_INFO"], "a request its callbacks still use keeps its env"
  end

  # One Request object per connection, not per request, unless callbacks still hold it.
  def test_a_finished_request_not_in_use_is_emptied_and_made_the_next_one
    reader = reader()
    @peer.write("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
    first = reader.read_request(now)
    reader.finish(false)
    assert_nil first.env, "an idle connection's kept request holds no env"
    @peer.write("GET /b HTTP/1.1\r\nHost: x\r\n\r\n")
    second = reader.read_request(now)
    assert_same first, second
    assert_equal "/b", second.env["PATH_INFO"]
  end

  def test_a_client_expecting_100_continue_is_answered_once_and_forgotten_after_the_response
    reader = reader()
    @peer.write("PUT /up HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n")
    reader.read_request(now)
    assert reader.expectation.pending?
    assert reader.continue
    assert_equal "HTTP/1.1 100 Continue\r\n\r\n", @peer.read_nonblock(100)
    refute reader.expectation.pending?
    refute reader.continue, "answered once"
    @peer.write("PUT /up HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n")
    reader.finish(false)
    reader.read_request(now)
    reader.finish(false)
    refute reader.expectation.pending?, "a finished request owes nothing"
  end

  def test_a_head_not_complete_within_header_timeout_times_out_and_a_closed_client_gives_nil
    reader = reader(header_timeout: 0.2)
    @peer.write("GET / HTTP/1.1\r\nHost:")
    assert_raises(Heron::TimeoutError) { reader.read_request(now) }
    @ours, @peer = UNIXSocket.pair
    reader = reader()
    @peer.write("GET / HTTP/1.1\r\n")
    @peer.close
    assert_nil reader.read_request(now)
  end

  def test_a_refused_request_raises_with_its_status_after_the_error_handler_is_told
    reader = reader(max_body_size: 4)
    @peer.write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
    error = assert_raises(Heron::Request::Input::TooLarge) { reader.read_request(now) }
    assert_equal 413, error.status
    assert_equal [[Heron::Request::Input::TooLarge, 413]], @rejected
  end

  private

  def reader(hijack: -> {}, **settings)
    handler = ->(error, _env, status) { @rejected << [error.class, status] && nil }
    config = Heron::Configuration.new(binds: ["tcp://127.0.0.1:0"], log_io: StringIO.new, error_io: StringIO.new,
                                      lowlevel_error_handler: handler, **settings)
    context = Heron::Server::Context.new(Heron::Server.new(APP, config))
    env = Heron::Request::EnvBuilder.new(context.env_template, @ours, config)
    RequestReader.new(Heron::Connection::BufferedSocket.new(@ours), context, env, hijack)
  end

  def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
end
