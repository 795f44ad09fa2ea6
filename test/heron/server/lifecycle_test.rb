# frozen_string_literal: true

require "test_helper"
require "net/http"

# Graceful and immediate shutdown of a real `heron` process.
class LifecycleTest < Minitest::Test
  # /slow marks that it reached the app (a file in the server's directory) before it sleeps, so
  # a test signals the server only once the request is in flight: a handshake, not a guess.
  SLOW_APP = <<~RUBY
    run lambda { |env|
      if env["PATH_INFO"] == "/slow"
        File.write("in_app", "")
        sleep 1
      end
      [200, { "content-type" => "text/plain" }, ["done \#{env['PATH_INFO']}"]]
    }
  RUBY

  def wait_in_app(log)
    eventually { File.exist?(File.join(File.dirname(log), "in_app")) }
  end

  def test_sigterm_finishes_the_request_in_flight_and_exits_zero
    pid, port, log = spawn_heron(SLOW_APP)
    slow = Thread.new { Net::HTTP.get_response(URI("http://127.0.0.1:#{port}/slow")) }
    wait_in_app(log)
    Process.kill("TERM", pid)
    response = slow.value
    assert_equal ["200", "done /slow", "close"], [response.code, response.body, response["connection"]]
    status = wait_exit(pid)
    assert status&.success?, "exit 0 after a graceful stop; log:\n#{File.read(log)}"
  end

  def test_drain_closes_idle_keepalive_and_refuses_new_connections
    pid, port, log = spawn_heron(SLOW_APP)
    idle = connect(port)
    idle.write("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
    assert_equal 200, read_response(idle)[0]
    busy = connect(port)
    busy.write("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
    wait_in_app(log)
    Process.kill("TERM", pid)
    assert closed_by_server?(idle, timeout: 2), "idle keep-alive connection closed at once"
    status, headers, body = read_response(busy)
    assert_equal [200, "close", "done /slow"], [status, headers["connection"], body]
    assert wait_exit(pid)&.success?
    assert_raises(Errno::ECONNREFUSED) { connect(port) }
  end

  def test_request_arriving_during_drain_gets_connection_close
    pid, port, log = spawn_heron(SLOW_APP)
    keep = connect(port)
    keep.write("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
    wait_in_app(log)
    Process.kill("TERM", pid)
    assert_equal "close", read_response(keep)[1]["connection"]
    assert wait_exit(pid)&.success?
  end

  def test_second_signal_stops_immediately
    pid, port, log = spawn_heron(SLOW_APP.sub("sleep 1", "sleep 30"))
    Thread.new { Net::HTTP.get_response(URI("http://127.0.0.1:#{port}/slow")) rescue nil }
    wait_in_app(log)
    Process.kill("TERM", pid) # the handler counts: the first stops gracefully, the second at once
    Process.kill("INT", pid)
    status = wait_exit(pid, timeout: 20)
    refute_nil status, "a second signal does not wait for the 30 s request"
  end

  def test_shutdown_timeout_bounds_the_drain
    pid, port, log = spawn_heron(SLOW_APP.sub("sleep 1", "sleep 30"), "--shutdown-timeout", "0.5")
    Thread.new { Net::HTTP.get_response(URI("http://127.0.0.1:#{port}/slow")) rescue nil }
    wait_in_app(log)
    Process.kill("TERM", pid)
    refute_nil wait_exit(pid, timeout: 20), "exits once shutdown_timeout passes, not with the 30 s request"
    assert_match(/still busy at shutdown timeout/, File.read(log))
  end

  def test_restart_and_resize_signals_leave_a_single_process_and_its_requests_alone
    pid, port, log = spawn_heron(SLOW_APP)
    slow = Thread.new { Net::HTTP.get_response(URI("http://127.0.0.1:#{port}/slow")) }
    wait_in_app(log)
    %w[USR1 TTIN TTOU HUP WINCH URG].each { |signal| Process.kill(signal, pid) }
    response = slow.value
    assert_equal ["200", "done /slow"], [response.code, response.body]
    assert_nil response["connection"], "no drain began"
    eventually { File.read(log).scan(/SIG(?:USR1|TTIN|TTOU) ignored/).size == 3 }
    assert_includes File.read(log), "SIGHUP: no log_file to reopen"
    assert_equal "done /again", Net::HTTP.get(URI("http://127.0.0.1:#{port}/again"))
    Process.kill("TERM", pid)
    assert wait_exit(pid)&.success?
  end
end
