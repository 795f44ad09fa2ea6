# frozen_string_literal: true

require "socket"
require_relative "clock"
require_relative "dialer"

module Bench
  # Opens many keep-alive connections to one server, sends one GET on each and reads the whole
  # response, leaving every connection open. Works in batches with non-blocking sockets and
  # IO.select, so it needs one file descriptor per connection and no threads or fibers.
  #
  #   pool = Bench::IdleConnections.new("127.0.0.1", port, batch: 500)
  #   pool.open(10_000)     # => number of connections that got a complete 200 response
  #   pool.request_all      # => same, for a second request on the connections already open
  #   pool.close
  class IdleConnections
    REQUEST = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    Failure = Struct.new(:stage, :message)

    def initialize(host, port, batch: 500, batch_timeout: 30)
      @dialer = Dialer.new(host, port, batch: batch, connect_timeout: 5)
      @batch_timeout = batch_timeout
      @sockets = []
    end

    # Failures by kind (connect, write, read, status, timeout, not tried).
    def failures = @dialer.failures

    def size
      @sockets.size
    end

    # Connects `count` sockets, `batch` at a time, and sends one request on each. Returns how many
    # got a complete 200 response; connections that failed are closed and counted in #failures.
    # With `within` (seconds), batches that would start later are not tried (counted in #failures
    # as "not tried"), so a server that answers slowly does not hold the caller for long.
    def open(count, within: nil)
      @dialer.each_batch(count, within: within) { |batch| exchange(batch) }
    end

    # Sends one more request on every open connection; returns how many were answered.
    def request_all
      @sockets.each_slice(@dialer.batch).sum { |batch| exchange(batch, keep_only_answered: false) }
    end

    def close
      @sockets.each { |s| s.close unless s.closed? }
      @sockets.clear
    end

    private

    # Writes the request on each socket (small enough to go out in one write) and reads until each
    # response is complete, the peer closes, or the batch deadline passes.
    def exchange(batch, keep_only_answered: true)
      pending = {}
      batch.each do |sock|
        sock.write_nonblock(REQUEST)
        pending[sock] = +""
      rescue SystemCallError, IOError => e
        failures["write: #{e.class}"] += 1
      end
      answered = read_responses(pending)
      answered.each { |sock| @sockets << sock } if keep_only_answered
      (batch - answered).each do |sock|
        sock.close unless sock.closed?
        @sockets.delete(sock)
      end
      answered.size
    end

    def read_responses(pending)
      answered = []
      deadline = Clock.now + @batch_timeout
      while pending.any? && (left = deadline - Clock.now).positive?
        ready, = IO.select(pending.keys, nil, nil, left)
        break unless ready

        ready.each do |sock|
          case (state = read_some(sock, pending[sock]))
          when :complete then answered << sock
          when :open then next
          else failures[state] += 1
          end
          pending.delete(sock)
        end
      end
      failures["timeout"] += pending.size if pending.any?
      answered
    end

    def read_some(sock, buffer)
      chunk = sock.read_nonblock(4096, exception: false)
      return :open if chunk == :wait_readable
      return "closed by server" if chunk.nil?

      buffer << chunk
      complete?(buffer)
    rescue SystemCallError, IOError => e
      "read: #{e.class}"
    end

    def complete?(buffer)
      head_end = buffer.index("\r\n\r\n")
      return :open unless head_end
      return "status: #{buffer[0, 12]}" unless buffer.start_with?("HTTP/1.1 200")

      length = buffer[/^content-length:\s*(\d+)/i, 1]
      return "no content-length" unless length
      buffer.bytesize >= head_end + 4 + length.to_i ? :complete : :open
    end
  end
end
