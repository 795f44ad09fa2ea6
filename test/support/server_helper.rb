# frozen_string_literal: true

require "stringio"

# Starts the real server for integration tests and talks to it over real sockets.
module ServerHelper
  # Runs a real Heron::Server on an ephemeral loopback port in a background thread.
  # @param app [#call] the Rack app; wrapped in Rack::Lint unless lint: false.
  # @param lint [Boolean] whether to wrap the app in Rack::Lint.
  # @param config [Hash] Heron::Configuration settings.
  # @yieldparam port [Integer] the bound port.
  # @yieldparam server [Heron::Server] the running server.
  # @return [Object] the block's result.
  def with_server(app, lint: true, metrics: nil, **config)
    server = start_server(app, lint: lint, metrics: metrics, **config)
    yield server.bound_ports.first, server
  ensure
    stop_server(server) if server
  end

  # Starts a server; the caller must call {#stop_server}.
  # @return [Heron::Server]
  # @param metrics [Heron::Metrics, nil] a registry the server reports to.
  def start_server(app, lint: true, metrics: nil, **config)
    app = Rack::Lint.new(app) if lint
    @server_log = StringIO.new
    settings = { binds: ["tcp://127.0.0.1:0"], log_io: @server_log, error_io: @server_log }
    server = Heron::Server.new(app, Heron::Configuration.new(**settings.merge(config)), metrics: metrics)
    server.bind
    @server_thread = Thread.new { server.run }
    server.wait_until_running(ProcessHelper::PATIENCE)
    server
  end

  # Stops a server started by {#start_server} and waits for its thread.
  def stop_server(server, graceful: false)
    server.stop(graceful: graceful)
    return if @server_thread.nil? || @server_thread.join(ProcessHelper::PATIENCE)
    flunk("server did not stop:\n#{@server_thread.backtrace&.first(15)&.join("\n")}")
  end

  # @return [String] what the server logged so far (access log and errors).
  def server_log
    @server_log.string
  end

  # Opens a TCP connection to the server.
  # @return [TCPSocket]
  def connect(port)
    TCPSocket.new("127.0.0.1", port)
  end

  # Sends raw bytes and reads until the server closes or `timeout` passes.
  # @return [String] everything the server sent.
  def raw_request(port, bytes, timeout: 5)
    socket = connect(port)
    socket.write(bytes)
    read_all(socket, timeout: timeout)
  ensure
    socket&.close
  end

  # Reads from a socket until EOF or `timeout` seconds pass without it.
  # @return [String]
  def read_all(socket, timeout: 5)
    data = +""
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
    loop do
      left = deadline - Process.clock_gettime(Process::CLOCK_MONOTONIC)
      break if left <= 0 || !socket.wait_readable(left)
      chunk = socket.read_nonblock(65_536, exception: false)
      break if chunk.nil?
      data << chunk unless chunk == :wait_readable
    rescue Errno::ECONNRESET
      break
    end
    data
  end

  # Reads one HTTP response (head and a Content-Length or chunked body) from a socket.
  # @return [Array(Integer, Hash, String)] status, headers (lower-case names), body.
  def read_response(socket, head: false)
    status_line = socket.gets or return nil
    status = status_line[/\AHTTP\/1\.\d (\d{3})/, 1].to_i
    headers = {}
    while (line = socket.gets) && line != "\r\n"
      name, value = line.chomp.split(": ", 2)
      headers[name.downcase] = value
    end
    [status, headers, head ? "" : read_body(socket, headers)]
  end

  # @return [Boolean] whether the peer closed the socket (EOF within `timeout`).
  def closed_by_server?(socket, timeout: 3)
    return false unless socket.wait_readable(timeout)
    socket.read_nonblock(1, exception: false).nil?
  rescue Errno::ECONNRESET
    true
  end

  private

  def read_body(socket, headers)
    return socket.read(headers["content-length"].to_i) if headers["content-length"]
    return "" unless headers["transfer-encoding"] == "chunked"
    body = +""
    while (size = socket.gets.to_i(16)).positive?
      body << socket.read(size)
      socket.read(2)
    end
    socket.gets
    body
  end
end

Minitest::Test.include(ServerHelper)
