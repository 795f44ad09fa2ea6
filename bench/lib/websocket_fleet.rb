# frozen_string_literal: true

require "socket"
require "base64"
require_relative "clock"
require_relative "dialer"

module Bench
  # Many WebSocket clients in one process with no threads or fibers: raw RFC 6455 over
  # non-blocking sockets (one descriptor each), for bench/websocket_idle.rb. Client frames carry
  # the all-zero masking key (any key is valid; this one leaves the payload as it is, so masking
  # costs the client nothing). Server frames are expected small (under 126 bytes).
  class WebSocketFleet
    include Clock

    # @return [Array<Socket>] the open WebSockets, in the order they opened.
    attr_reader :sockets
    def initialize(host, port, batch: 500, timeout: 60)
      @host = host
      @dialer = Dialer.new(host, port, batch: batch, connect_timeout: timeout)
      @timeout = timeout
      @sockets = []
    end

    # @return [Hash{String => Integer}] failures by kind.
    def failures = @dialer.failures

    # Opens `count` more WebSockets, `batch` at a time (each batch's handshakes are written,
    # then their 101 heads read).
    # @return [Integer] how many opened.
    def open(count)
      @dialer.each_batch(count) { |batch| handshake(batch) }
    end

    # @return [String] a masked client text frame.
    def self.frame(text)
      payload = text.b
      length = payload.bytesize
      head = length < 126 ? [0x81, 0x80 | length].pack("CC") : [0x81, 0x80 | 126, length].pack("CCn")
      head << "\0\0\0\0" << payload
    end

    # Sends `rate` echo messages a second for `seconds`, each on the next socket in turn, and
    # times each round trip.
    # @return [Array<Float>] round-trip seconds, sorted.
    def echo_latencies(rate:, seconds:, over: @sockets)
      sent = {}
      latencies = []
      start = now
      total = rate * seconds
      total.times do |index|
        socket = over[index % over.size]
        collect(sent, latencies, start + (index.fdiv(rate)))
        socket.write(self.class.frame("echo #{index}"))
        sent[socket] = now
      end
      collect(sent, latencies, now + @timeout, last: true) unless sent.empty?
      failures["echo not answered"] += sent.size unless sent.empty?
      latencies.sort
    end

    # One member sends a broadcast; times until every socket has read it (a sweep of
    # non-blocking reads, so the time includes the client's own sweep, a few ms at 10,000).
    # @return [Array(Float, Integer)] seconds until the last one had it, and how many had it.
    def broadcast(deadline: @timeout)
      waiting = @sockets.dup
      start = now
      @sockets.first.write(self.class.frame("broadcast from the first"))
      until waiting.empty? || now - start > deadline
        waiting.reject! { |socket| socket.read_nonblock(256, exception: false).is_a?(String) }
      end
      failures["broadcast not received"] += waiting.size unless waiting.empty?
      [now - start, @sockets.size - waiting.size]
    end

    # Closes `count` sockets (the last opened), or all.
    def close(count = @sockets.size)
      @sockets.pop(count).each(&:close)
    end

    private

    def handshake(batch)
      key = Base64.strict_encode64("heron websockets")
      request = "GET /hub HTTP/1.1\r\nHost: #{@host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" \
                "Sec-WebSocket-Key: #{key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
      batch.each { |socket| socket.write(request) }
      heads = batch.to_h { |socket| [socket, +""] }
      read_heads(heads)
      heads.each { |socket, head| head.start_with?("HTTP/1.1 101") ? @sockets << socket : fail(socket, head) }
      heads.count { |_, head| head.start_with?("HTTP/1.1 101") }
    end

    def read_heads(heads)
      deadline = now + @timeout
      waiting = heads.keys
      until waiting.empty? || now > deadline
        ready, = IO.select(waiting, nil, nil, deadline - now)
        (ready || []).each do |socket|
          data = socket.read_nonblock(4096, exception: false)
          data.is_a?(String) ? heads[socket] << data : heads[socket] << "EOF"
          waiting.delete(socket) if heads[socket].include?("\r\n\r\n") || data.nil?
        end
      end
    end

    def fail(socket, head)
      failures["handshake: #{head[/\A[^\r\n]*/].to_s.empty? ? 'no answer' : head[/\A[^\r\n]*/]}"] += 1
      socket.close
    end

    # Reads the answers that come until `until_time`; with `last`, only until none is awaited.
    def collect(sent, latencies, until_time, last: false)
      loop do
        wait = until_time - now
        return if sent.empty? && last
        return (sleep(wait) if wait.positive?) if sent.empty?
        ready, = IO.select(sent.keys, nil, nil, [wait, 0].max)
        (ready || []).each do |socket|
          next unless socket.read_nonblock(256, exception: false).is_a?(String)
          latencies << (now - sent.delete(socket))
        end
        return if until_time <= now
      end
    end
  end
end
