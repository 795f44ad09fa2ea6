# frozen_string_literal: true

require "test_helper"
require "net/http"

# rack.after_reply and rack.response_finished, observed over real sockets.
class CallbackRunnerTest < Minitest::Test
  def setup
    @events = Queue.new
  end

  def app_with(&register)
    lambda do |env|
      register.call(env)
      raise "app failed" if env["PATH_INFO"] == "/raise"
      [200, { "content-type" => "text/plain" }, ["ok #{env['PATH_INFO']}"]]
    end
  end

  def slow_callback(name, seconds)
    lambda do
      @events << "#{name} start"
      sleep seconds
      @events << "#{name} end"
    end
  end

  def drain_events
    events = []
    events << @events.pop until @events.empty?
    events
  end

  def test_slow_after_reply_holds_up_neither_response_nor_next_request_nor_other_connections
    app = app_with { |env| env["rack.after_reply"] << slow_callback(env["PATH_INFO"], 1.5) }
    with_server(app, threads: 1) do |port|
      socket = connect(port)
      socket.write("GET /first HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_equal "ok /first", read_response(socket)[2]
      socket.write("GET /second HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_equal "ok /second", read_response(socket)[2], "keep-alive request is not held up"
      others = 20.times.map { Thread.new { Net::HTTP.get(URI("http://127.0.0.1:#{port}/other")) } }.map(&:value)
      assert_equal ["ok /other"] * 20, others
      assert_empty(drain_events.grep(/end/), "every response came back while the callbacks were still sleeping")
    end
  end

  def test_schedule_says_whether_it_kept_the_request
    runner = Heron::Server::CallbackRunner.new(nil, 1, hold: true)
    kept = Heron::Request.new({ "rack.after_reply" => [-> {}], "rack.response_finished" => [] }, nil, true, 1, 0.0)
    left = Heron::Request.new({ "rack.after_reply" => [], "rack.response_finished" => [] }, nil, true, 1, 0.0)
    assert_equal [true, false], [runner.schedule(kept, nil), runner.schedule(left, nil)]
    assert_equal 1, runner.backlog
  end

  def test_order_arguments_and_errors
    calls = []
    app = app_with do |env|
      env["rack.after_reply"] << -> { calls << :first } << -> { raise "callback broke" } << -> { calls << :third }
      env["rack.response_finished"] << ->(*args) { calls << [:finished_a, args[1], args[3]] }
      env["rack.response_finished"] << ->(*args) { calls << [:finished_b, args[0].equal?(env), args[2]["content-type"]] }
    end
    with_server(app) do |port|
      socket = connect(port)
      socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_equal 200, read_response(socket)[0]
      eventually { calls.size == 4 }
      assert_equal [[:finished_b, true, "text/plain"], [:finished_a, 200, nil], :first, :third], calls
      assert_match(/after-reply callback proc at .*callback_runner_test.rb:\d+ raised.*callback broke/m, server_log)
      refute socket.wait_readable(0.2), "the client sees nothing more after the response"
    end
  end

  def test_callbacks_run_when_the_app_raised
    errors = Queue.new
    app = app_with { |env| env["rack.response_finished"] << ->(_env, status, _headers, error) { errors << [status, error&.message] } }
    with_server(app) do |port|
      raw_request(port, "GET /raise HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_equal [500, "app failed"], Timeout.timeout(ProcessHelper::PATIENCE) { errors.pop }
    end
  end

  def test_write_error_is_reported_when_the_client_went_away
    errors = Queue.new
    body = Object.new
    body.define_singleton_method(:each) { |&blk| 100.times { blk.call("x" * 65_536) } }
    app = lambda do |env|
      env["rack.response_finished"] << ->(_env, _status, _headers, error) { errors << error }
      [200, { "content-type" => "text/plain" }, body]
    end
    with_server(app) do |port|
      socket = connect(port)
      socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
      socket.readpartial(100)
      socket.close
      assert_kind_of SystemCallError, Timeout.timeout(ProcessHelper::PATIENCE) { errors.pop }
    end
  end

  def test_concurrency_is_bounded_and_nothing_is_dropped
    running = 0
    peak = 0
    done = Queue.new
    callback = lambda do
      running += 1
      peak = [peak, running].max
      sleep 0.1
      running -= 1
      done << true
    end
    with_server(app_with { |env| env["rack.after_reply"] << callback }, after_reply_concurrency: 2) do |port|
      8.times.map { Thread.new { Net::HTTP.get(URI("http://127.0.0.1:#{port}/")) } }.each(&:join)
      Timeout.timeout(ProcessHelper::PATIENCE) { 8.times { done.pop } }
    end
    assert_equal 2, peak
  end

  def test_access_log_duration_excludes_callback_time
    with_server(app_with { |env| env["rack.after_reply"] << -> { sleep 2 } }) do |port| # 2 s: room for a loaded machine
      raw_request(port, "GET /timed HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      duration = server_log[%r{"GET /timed HTTP/1.1" 200 \d+ ([\d.]+)}, 1].to_f
      assert_operator duration, :<, 2
    end
  end

  def test_graceful_stop_waits_for_callbacks_and_names_the_late_ones
    finished = Queue.new
    app = app_with do |env|
      env["rack.after_reply"] << -> { sleep 0.3; finished << :short }
      env["rack.after_reply"] << Class.new { def self.name = "ForeverJob"; def call = sleep(30) }.new if env["PATH_INFO"] == "/forever"
    end
    server = start_server(app, shutdown_timeout: 1)
    port = server.bound_ports.first
    raw_request(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    raw_request(port, "GET /forever HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    stop_server(server, graceful: true)
    assert_equal 2, finished.size, "pending callbacks ran before the server stopped"
    assert_match(/after-reply callback still running at shutdown: ForeverJob/, server_log)
  end
end
