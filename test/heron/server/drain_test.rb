# frozen_string_literal: true

require "test_helper"
require "net/http"

# A graceful stop refuses new connections at once (issue 12, point 3): the draining process closes
# its listeners as soon as it stops accepting (a cluster's master and workers all close their
# copies), while requests in flight finish. drain_delay keeps serving for a while first.
class DrainTest < Minitest::Test
  SLOW_APP = <<~RUBY
    run lambda { |env|
      if env["PATH_INFO"] == "/slow"
        File.write("started", "1")
        deadline = Time.now + 30 # held until the test writes "release" (bounded)
        sleep 0.05 until File.exist?("release") || Time.now > deadline
      end
      [200, { "content-type" => "text/plain" }, ["done \#{env['PATH_INFO']}"]]
    }
  RUBY

  def test_single_process_refuses_new_connections_while_a_slow_request_finishes
    refuses_while_draining
  end

  def test_cluster_refuses_new_connections_while_a_slow_request_finishes
    refuses_while_draining("-w", "2")
  end

  def test_reactor_threads_refuse_new_connections_once_all_stopped_accepting
    refuses_while_draining("-t", "2")
  end

  def test_drain_delay_keeps_serving_then_refuses
    pid, port, log = spawn_heron(SLOW_APP, "--drain-delay", "1.5")
    slow = start_slow(port, log)
    Process.kill("TERM", pid)
    assert_equal "done /during-delay", get(port, "/during-delay").body, "still served during drain_delay"
    eventually { refused?(port) }
    assert slow.alive?, "refused while the slow request is still in flight"
    release(log)
    assert_equal ["200", "done /slow"], [slow.value.code, slow.value.body]
    assert wait_exit(pid)&.success?
  end

  def test_draining_is_true_from_the_stop_request_and_during_drain_delay
    server = start_server(->(_env) { [200, { "content-type" => "text/plain" }, ["ok"]] }, drain_delay: 1)
    refute server.draining?
    server.stop(graceful: true)
    assert server.draining?
    assert_equal "200", get(server.bound_ports.first, "/").code, "still served during drain_delay"
    assert @server_thread.join(10), "stops once the delay and the drain are over"
    assert server.draining?
  end

  # A client that connected before the stop but whose request arrives just after it (the bytes
  # follow the handshake) is served, not closed as idle; one that stays silent is closed after
  # the grace.
  def test_a_connection_accepted_before_the_stop_still_gets_its_first_request_served
    server = start_server(->(_env) { [200, { "content-type" => "text/plain" }, ["ok"]] })
    early = connect(server.bound_ports.first)
    silent = connect(server.bound_ports.first)
    eventually { server.connection_count == 2 }
    server.stop(graceful: true)
    eventually { server.draining? }
    early.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    status, headers, body = read_response(early)
    assert_equal [200, "close", "ok"], [status, headers["connection"], body]
    assert closed_by_server?(silent, timeout: Heron::Server::Parking::FIRST_BYTE_GRACE + 3), "a silent one is closed after the grace"
    assert @server_thread.join(10)
  ensure
    [early, silent].each { |socket| socket&.close }
  end

  private

  def refuses_while_draining(*args)
    pid, port, log = spawn_heron(SLOW_APP, *args)
    slow = start_slow(port, log)
    Process.kill("TERM", pid)
    eventually { refused?(port) }
    assert slow.alive?, "refused while the slow request is still in flight"
    release(log)
    assert_equal ["200", "done /slow"], [slow.value.code, slow.value.body]
    assert wait_exit(pid)&.success?, File.read(log)
  end

  # Lets the held /slow request finish.
  def release(log)
    File.write(File.join(File.dirname(log), "release"), "1")
  end

  # Starts a request to /slow and waits until the app is running it.
  def start_slow(port, log)
    marker = File.join(File.dirname(log), "started")
    slow = Thread.new { get(port, "/slow") }
    eventually { File.exist?(marker) }
    slow
  end

  def get(port, path)
    Net::HTTP.start("127.0.0.1", port, open_timeout: 5, read_timeout: 40) { |http| http.get(path) }
  end

  # A connection made now is refused by the kernel (not accepted into a backlog nobody reads).
  def refused?(port)
    connect(port).close
    false
  rescue Errno::ECONNREFUSED
    true
  end
end
