# frozen_string_literal: true

require "socket"
require "uri"
require_relative "metrics"

module Heron
  module Profiler
    # A tiny HTTP/1.0-style server for Prometheus scrapes, on its own address (never the app's):
    # GET /metrics answers the text format; anything else is 404 (405 for other methods). One
    # connection at a time, closed after each answer. {#run} waits with short timeouts, so it works
    # both inside an Async task (the waits go through the fiber scheduler) and in a plain Thread.
    class MetricsServer
      # Raised by {#bind} when metrics_bind cannot be opened.
      class BindError < Heron::ConfigError; end

      POLL_SECONDS = 0.2
      READ_TIMEOUT = 5.0
      MAX_HEAD = 8 * 1024

      # @param config [Heron::Configuration] reads `metrics_bind` ("tcp://host:port" or "unix:///path").
      # @param metrics [#to_prometheus] a {Metrics} or {Metrics::Aggregate}.
      def initialize(config, metrics)
        @uri = config.metrics_bind
        @metrics = metrics
        @closed = false
      end

      # Opens the listening socket.
      # @return [self]
      # @raise [BindError] when the address is in use, not allowed, or not understood.
      def bind
        @server = open_listener(URI.parse(@uri))
        self
      rescue Errno::EADDRINUSE
        raise BindError, "metrics_bind #{@uri} is already in use; choose another address or turn metrics off"
      rescue URI::InvalidURIError, SocketError, SystemCallError => error
        raise BindError, "metrics_bind #{@uri} cannot be opened: #{error.message}"
      end

      # @return [Integer, nil] the bound TCP port (nil for a Unix socket or before {#bind}).
      def port
        @server.local_address.ip_port if @server&.local_address&.ip?
      end

      # Serves scrapes until {#close}. Binds first if {#bind} was not called.
      # @return [void]
      def run
        bind unless @server
        serve_one until @closed
      rescue IOError, Errno::EBADF
        nil # closed under us
      end

      # Stops {#run} (within {POLL_SECONDS}) and closes the socket.
      # @return [void]
      def close
        @closed = true
        @server&.close unless @server&.closed?
        File.delete(@path) if @path && File.socket?(@path)
      end

      private

      def open_listener(uri)
        case uri.scheme
        when "tcp" then TCPServer.new(uri.hostname, uri.port)
        when "unix" then UNIXServer.new(@path = uri.path)
        else raise URI::InvalidURIError, "use tcp://host:port or unix:///path"
        end
      end

      def serve_one
        return unless @server.wait_readable(POLL_SECONDS)
        client = @server.accept_nonblock(exception: false)
        answer(client) unless client == :wait_readable
      end

      def answer(client)
        client.write(response_for(read_head(client)))
      rescue SystemCallError, IOError
        nil # the scraper went away
      ensure
        client.close
      end

      def read_head(client)
        head = +""
        deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + READ_TIMEOUT
        until head.include?("\r\n\r\n") || head.include?("\n\n") || head.bytesize > MAX_HEAD
          left = deadline - Process.clock_gettime(Process::CLOCK_MONOTONIC)
          break unless left.positive? && client.wait_readable(left)
          chunk = client.read_nonblock(4096, exception: false)
          break if chunk.nil?
          head << chunk if chunk.is_a?(String)
        end
        head
      end

      def response_for(head)
        method, target = head.split(" ", 3)
        return reply(400, "text/plain", "Bad Request\n") unless target
        return reply(405, "text/plain", "Method Not Allowed\n", "Allow: GET, HEAD\r\n") unless %w[GET HEAD].include?(method)
        return reply(404, "text/plain", "Not Found: try /metrics\n") unless target.split("?").first == "/metrics"
        reply(200, Metrics::TextFormat::CONTENT_TYPE, @metrics.to_prometheus, "", head: method == "HEAD")
      end

      def reply(status, type, body, extra = "", head: false)
        reason = { 200 => "OK", 400 => "Bad Request", 404 => "Not Found", 405 => "Method Not Allowed" }
        "HTTP/1.1 #{status} #{reason[status]}\r\nContent-Type: #{type}\r\nContent-Length: #{body.bytesize}\r\n" \
          "#{extra}Connection: close\r\n\r\n#{head ? '' : body}"
      end
    end
  end
end
