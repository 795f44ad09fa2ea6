# frozen_string_literal: true

require "test_helper"
require "tmpdir"

# The server across listeners and reactor threads.
class ServerTest < Minitest::Test
  APP = ->(env) { [200, { "content-type" => "text/plain" }, ["#{env['rack.multithread']} #{Thread.current.object_id}"]] }

  # A request that blocks its thread without yielding (IO.select is not hooked by the fiber
  # scheduler on Ruby 3.1) stalls its whole reactor; with threads: 2 the other reactor thread
  # serves the request that releases it. With one reactor this would deadlock until the timeout.
  def test_threads_mode_serves_while_one_reactor_thread_is_blocked
    reader, writer = IO.pipe
    blocking = Thread::Queue.new
    app = lambda do |env|
      if env["PATH_INFO"] == "/block"
        blocking << Thread.current
        # Blocking the thread is the point. Generous: only a broken server waits it out.
        ready = IO.select([reader], nil, nil, 30) # rubocop:disable Lint/IncompatibleIoSelectWithFiberScheduler
        body = ready ? "released" : "timed out"
      else
        writer.write("x")
        body = "releaser"
      end
      [200, { "content-type" => "text/plain" }, ["#{body} #{env['rack.multithread']} #{Thread.current.object_id}"]]
    end
    with_server(app, threads: 2) do |port|
      blocked = Thread.new { raw_request(port, "GET /block HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") }
      # /go only once /block holds its reactor thread (a fixed sleep could be outlasted: /go
      # would then be served first, and both possibly on the same thread).
      eventually { !blocking.empty? }
      releaser = raw_request(port, "GET /go HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      first = blocked.value.split("\r\n\r\n").last.split
      second = releaser.split("\r\n\r\n").last.split
      assert_equal %w[released true], first.first(2)
      assert_equal %w[releaser true], second.first(2)
      refute_equal first.last, second.last, "served by different reactor threads"
    end
  ensure
    [reader, writer].each { |io| io&.close }
  end

  def test_unix_socket_and_tcp_together
    Dir.mktmpdir do |dir|
      path = File.join(dir, "heron.sock")
      with_server(APP, binds: ["tcp://127.0.0.1:0", "unix://#{path}"]) do |port, server|
        assert_equal ["http://127.0.0.1:#{port}", "unix://#{path}"], server.addresses
        socket = UNIXSocket.new(path)
        socket.write("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert_match(/\AHTTP\/1.1 200 OK/, read_all(socket))
      end
      refute File.exist?(path), "socket file removed at stop"
    end
  end

  def test_bind_errors_are_clear
    taken = TCPServer.new("127.0.0.1", 0)
    server = Heron::Server.new(APP, Heron::Configuration.new(binds: ["tcp://127.0.0.1:#{taken.addr[1]}"]))
    error = assert_raises(Heron::BindError) { server.bind }
    assert_match(/could not listen on tcp:\/\/127.0.0.1:\d+: .*in use/i, error.message)
    assert_raises(Heron::ConfigError) { Heron::Configuration.new(binds: ["ftp://x"]) }
  ensure
    taken&.close
  end
end
