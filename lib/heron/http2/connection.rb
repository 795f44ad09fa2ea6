# frozen_string_literal: true

require "protocol/http2/server"
require "protocol/http2/framer"
require "protocol/http2/stream"
require_relative "socket_stream"
require_relative "header_block"
require_relative "session"
require_relative "stream_settings"
require_relative "env_builder"
require_relative "framing"
require_relative "../upgrade/handshake"
require_relative "../request"
require_relative "../request/rewindable_input"
require_relative "../request/input"
require_relative "../clock"

module Heron
  module HTTP2
    # Serves one HTTP/2 connection (TLS with ALPN `h2`, or cleartext with prior knowledge) in the
    # connection's fiber: reads frames, and runs each stream's request in a fiber of its own
    # ({Framing}: the Rack exchange itself, Heron::Exchange, is HTTP/1.1's). A graceful stop
    # sends GOAWAY and lets the open streams finish.
    class Connection
      PREFACE = Protocol::HTTP2::CONNECTION_PREFACE
      QUIET = [EOFError, IOError, SystemCallError, Heron::TimeoutError,
               Protocol::HTTP2::Error, Protocol::HPACK::Error].freeze

      # @param socket [Heron::Connection::BufferedSocket] the preface may already be buffered.
      # @param timeout [Numeric] seconds to wait for the first byte.
      # @param deadline [Float] monotonic time by which the bytes that tell must have come (the
      #   deadline of an HTTP/1.1 request head), however they are paced.
      # @return [Boolean, nil] whether the client speaks HTTP/2: ALPN chose h2, or (cleartext) it
      #   sent the connection preface; nil when it sent nothing within `timeout` or went away.
      def self.wanted?(socket, timeout, deadline)
        return socket.io.alpn_protocol == "h2" if socket.io.respond_to?(:alpn_protocol)
        while socket.buffered_bytes < PREFACE.bytesize && PREFACE.start_with?(socket.peek(PREFACE.bytesize))
          wait = socket.buffered? ? deadline - Clock.now : timeout
          raise Heron::TimeoutError, "connection preface timed out" unless wait.positive?
          socket.fill(wait) or return (socket.buffered? ? false : nil)
        end
        socket.peek(PREFACE.bytesize) == PREFACE
      rescue Heron::TimeoutError
        socket.buffered? ? false : nil
      end

      # @param socket [Heron::Connection::BufferedSocket]
      # @param context [Server::Context] config, logger, date.
      # @param exchange [Heron::Exchange] the connection's Rack exchange (Heron::Connection's).
      # @param env [Request::EnvBuilder] the connection's env builder (Heron::Connection's).
      # @param deadline [Float] monotonic time by which the connection preface and the client's
      #   first SETTINGS must have come (`header_timeout` after the accept, as for HTTP/1.1).
      # @param parking [Server::Parking, nil] whose #kept_wait the reads between streams take first.
      def initialize(socket, context, exchange, env, deadline:, parking: nil)
        @deadline = deadline
        @parking = parking
        @socket = socket
        @context = context
        @exchange = exchange
        @common = env
        @config = context.config
        @running = 0
        @draining = false
        @env = EnvBuilder.new(env)
        @rewindable = @config.rewindable_input?
        @idle = nil # the stream task waiting for the next request (#work)
        @closed = false
        HeaderBlock.max_bytes = @config.max_header_bytes
      end

      # Serves streams until the client goes away, the protocol fails, or a drain completes.
      # @return [void]
      def serve
        @task = Async::Task.current
        @session = new_session
        @stream.head(@deadline) { @session.read_connection_preface(settings) }
        @session.read_frames
      rescue *QUIET
        nil
      ensure
        @closed = true
        @idle&.stop
        @session&.close
      end

      # Starts a graceful stop: GOAWAY, no new streams, and the connection closes once the open
      # ones are done (at once when there are none). A `rack.upgrade` SSE stream, which would
      # never be done, is ended (Upgrade::StreamSession#shutdown: on_shutdown, then the end).
      # @return [void]
      def drain
        return if @draining || @session.nil? || @session.closed?
        @draining = true
        goaway(Protocol::HTTP2::NO_ERROR)
        @session.streams.each_value { |stream| stream.watcher&.shutdown if stream.respond_to?(:watcher) }
        @task.stop if @running.zero?
      end

      private

      def new_session
        @stream = SocketStream.new(@socket, write_timeout: @config.write_timeout, read_timeout: -> { read_timeout },
                                            header_timeout: @config.header_timeout, idle_wait: (method(:idle_wait) if @parking))
        session = Session.new(Protocol::HTTP2::Framer.new(@stream, Session::FRAMES), max_streams: max_streams,
                                                                                   stream_settings: stream_settings,
                                                                                   running: -> { @draining ? max_streams : @running }, output: @stream,
                                                                                   env: @env)
        @stream.reader = session # writes while it works through read frames leave together
        session
      end

      def max_streams = @config.http2_max_concurrent_streams

      def settings
        [[Protocol::HTTP2::Settings::MAXIMUM_CONCURRENT_STREAMS, max_streams],
         [Protocol::HTTP2::Settings::MAXIMUM_HEADER_LIST_SIZE, @config.max_header_bytes],
         [Protocol::HTTP2::Settings::ENABLE_PUSH, 0]]
      end

      # Idle between streams: keepalive_timeout; while a stream runs the client may be silent.
      def read_timeout
        return @config.header_timeout if @session.nil? || @session.state == :new
        @running.zero? ? @config.keepalive_timeout : nil
      end

      def stream_settings
        StreamSettings.new(on_request: method(:start), body_limit: @config.max_body_size, body_timeout: @config.body_timeout,
                           header_limit: @config.max_header_bytes, body_budget: @context.body_budget,
                           empty_input: @context.empty_input)
      end

      # Between streams (none running, the connection open) the read waits as a kept-alive
      # HTTP/1.1 connection that cannot park does, up to keepalive_timeout with no scheduler
      # timer of its own (Server::Parking#kept_wait): each h2c request made one.
      def idle_wait(socket)
        @running.zero? && @session&.state == :open && @parking.kept_wait(socket)
      end

      # A stream's headers are complete: its request runs in a fiber of its own.
      def start(stream)
        started = Clock.now
        input = input(stream)
        env = @common.complete(@env.env(stream.request_headers), input, started)
        env["rack.upgrade?"] = :sse if Upgrade::Handshake.kind(env) == :sse # no WebSockets over HTTP/2 (RFC 8441)
        request = Request.new(env, input, true, 1, started)
        @running += 1
        dispatch(stream, request)
      rescue EnvBuilder::Malformed
        stream.send_reset_stream(Protocol::HTTP2::PROTOCOL_ERROR)
      rescue EnvBuilder::InvalidTarget => e
        reject(stream, e.status, e.message)
      end

      # Answers a request the app never sees with a short error response, as HTTP/1.1 does, and
      # ends the stream if the client was still sending.
      def reject(stream, status, message)
        @context.logger.rejected(status, message, @common.remote_addr)
        status, headers, body = Response::ErrorResponse.rack(status)
        stream.send_headers([[":status", status.to_s], ["date", @context.date.value], *headers])
        stream.send_data(body.join, Protocol::HTTP2::END_STREAM)
        stream.send_reset_stream(Protocol::HTTP2::NO_ERROR) if stream.state == :half_closed_local
      rescue *QUIET
        nil
      end

      # The stream's body, made rewindable (kept as it is read) when `rewindable_input` is on.
      def input(stream)
        return stream.input unless @rewindable
        Request::RewindableInput.new(stream.input, threshold: @config.body_spool_threshold)
      end

      # The request runs in the stream task that finished the connection's last one, if it waits
      # (no Task, Fiber and fiber storage made per stream), else in a new task. Like an HTTP/1.1
      # connection's fiber, that task runs its requests one after another.
      def dispatch(stream, request)
        worker = @idle
        @idle = nil
        return @task.async(annotation: "heron http2 stream") { work(stream, request) } unless worker&.alive?
        Fiber.scheduler.resume(worker.fiber, stream, request)
      end

      # Runs requests, waiting between them for #dispatch; one task per connection waits at most,
      # and it is stopped when the connection ends (#serve).
      def work(stream, request)
        framing = Framing.new(@context, @exchange)
        while stream
          run(framing, stream, request)
          break if @draining || @idle || @closed
          @idle = Async::Task.current
          stream, request = Fiber.scheduler.transfer
        end
      end

      def run(framing, stream, request)
        framing.run(stream, request)
      ensure
        @running -= 1
        @task.stop if @draining && @running.zero?
      end

      def goaway(code)
        frame = Protocol::HTTP2::GoawayFrame.new
        frame.pack(@session.remote_stream_id, code, "")
        @session.write_frame(frame)
      rescue *QUIET
        nil
      end
    end
  end
end
