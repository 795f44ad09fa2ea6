# frozen_string_literal: true

require "socket"
require "json"

# A small real HTTP/1.1 server for the attack tests: a thread per connection, keep-alive,
# a configurable delay before each response, an optional one-time stall, and a choice of
# body framing (Content-Length, chunked, or close-delimited).
class TestServer
  attr_reader :port, :requests

  # @param delay [Float] seconds to wait before every response.
  # @param stall_at [Integer, nil] the request number (1-based) that waits `stall` seconds extra.
  # @param stall [Float] length of the one-time stall.
  # @param framing [Symbol] :length, :chunked or :close.
  # @param status [Integer] the response status.
  # @param log [String, nil] a file to append each request to, as a JSON line {head:, body:}.
  # @param fail_from [Integer, nil] the request number (1-based) from which every response is a 503.
  # @param served [String, nil] a file to append, once each response is written, the
  #   milliseconds from its request's head to its last byte (the server's own share of the
  #   latency, a delayed sleep included).
  def initialize(delay: 0, stall_at: nil, stall: 1.0, framing: :length, status: 200, log: nil, fail_from: nil, served: nil)
    @log = log
    @served = served
    @fail_from = fail_from
    @delay = delay
    @stall_at = stall_at
    @stall = stall
    @framing = framing
    @status = status
    @requests = 0
    @lock = Mutex.new
    @server = TCPServer.new("127.0.0.1", 0)
    @port = @server.addr[1]
    @threads = []
  end

  # Starts accepting; yields the URL base and stops afterwards when a block is given.
  # @return [self, Object]
  def start
    @acceptor = Thread.new { accept_loop }
    return self unless block_given?
    begin
      yield "http://127.0.0.1:#{@port}"
    ensure
      stop
    end
  end

  # Runs the server in a child process (so its threads do not compete with the test's
  # generator for the GVL), yields the URL base, then kills the child.
  # @return [Object] the block's result.
  def self.fork_server(**options)
    server = new(**options)
    pid = fork { server.start.join_forever }
    begin
      yield "http://127.0.0.1:#{server.port}"
    ensure
      Process.kill(:KILL, pid)
      Process.wait(pid)
      server.close_listener
    end
  end

  # Blocks until the process is killed.
  def join_forever
    @acceptor.join
  end

  # Closes the parent's copy of the listening socket.
  def close_listener
    @server.close
  end

  # Stops accepting and kills the connection threads.
  def stop
    @server.close
    @acceptor&.kill
    @threads.each(&:kill)
  end

  private

  def accept_loop
    loop { spawn(@server.accept) }
  rescue IOError, Errno::EBADF
    nil
  end

  def spawn(socket)
    @threads << Thread.new { serve(socket) }
  end

  def serve(socket)
    while (head = read_head(socket))
      body = head =~ /^content-length:/i ? socket.read(head[/^content-length:\s*(\d+)/i, 1].to_i) : ""
      record(head, body) if @log
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      respond(socket, head)
      time_served(started) if @served
      break if @framing == :close || head =~ /^connection:\s*close/i
    end
  rescue IOError, SystemCallError
    nil
  ensure
    socket.close
  end

  def record(head, body)
    line = "#{JSON.generate('head' => head, 'body' => body)}\n"
    @lock.synchronize { File.write(@log, line, mode: "a") }
  end

  def time_served(started)
    ms = (Process.clock_gettime(Process::CLOCK_MONOTONIC) - started) * 1000
    @lock.synchronize { File.write(@served, format("%.3f\n", ms), mode: "a") }
  end

  def read_head(socket)
    head = +""
    while (line = socket.gets)
      return head if line == "\r\n"
      head << line
    end
    nil
  end

  def respond(socket, head)
    number = @lock.synchronize { @requests += 1 }
    sleep(@delay) if @delay.positive?
    sleep(@stall) if number == @stall_at
    body = head.start_with?("HEAD") ? "" : "hello"
    status = @fail_from && number >= @fail_from ? 503 : @status
    socket.write("HTTP/1.1 #{status} X\r\n#{framing_header(body)}\r\n#{framed(body)}")
  end

  def framing_header(body)
    case @framing
    when :length then "Content-Length: #{body.bytesize}\r\n"
    when :chunked then "Transfer-Encoding: chunked\r\n"
    else "Connection: close\r\n"
    end
  end

  def framed(body)
    return body unless @framing == :chunked
    "#{body.bytesize.to_s(16)}\r\n#{body}\r\n0\r\n\r\n"
  end
end
