# frozen_string_literal: true

require_relative "connection/buffered_socket"
require_relative "connection/client_wait"
require_relative "connection/request_reader"
require_relative "request/env_builder"
require_relative "response/writer"
require_relative "response/error_response"
require_relative "exchange"
require_relative "http2/connection"
require_relative "upgrade/handshake"
require_relative "upgrade/session"
require_relative "websocket/codec"
require_relative "sse/codec"

module Heron
  # Serves one client connection, in its own fiber: reads each request (Connection::RequestReader),
  # has the Rack exchange answer it, writes the response, then loops for keep-alive and
  # pipelined requests; or hands the connection to HTTP/2 or to an upgraded session. How long it
  # has waited on its client is its Connection::ClientWait's.
  class Connection
    # @param io [BasicSocket] the accepted socket.
    # @param context [Server::Context] the app, configuration, logger and what connections share.
    # @param listener [#draining?, #admit, #finished, #parking, #exchange, #mailbox] told of each
    #   request (the reactor thread): `draining?` whether to take another request, `admit(request)`
    #   before the app is called (a response when the request is shed), `finished(request)` after
    #   the response; `parking` the Server::Parking it waits for its client through (asked once,
    #   for its spot); `exchange` the Heron::Exchange its requests go through (one for all its
    #   connections); `mailbox` for an upgraded connection's writes from other threads.
    # @param accepted_at [Float] monotonic time of accept.
    # @param peer [String, nil] the client's address from a PROXY protocol header.
    def initialize(io, context, listener, accepted_at, peer: nil)
      # What the request loop reads for every request is set first: Ruby 3.1 keeps the instance
      # variables in the order first set, so these share the fewest cache lines
      # (bench/results/per_core.md, "Fewer cold lines a request").
      @reader = @writer = nil # HTTP/1.1's (#speak_http1)
      @session = @hijacked = nil # an upgraded connection's session; whether the app took the socket
      @socket = Connection::BufferedSocket.new(io, context.scratch_buffer)
      @spot = listener.parking.spot(self, @socket, accepted_at) # where it waits for its client
      @wait = Connection::ClientWait.new(@spot, accepted_at)
      @exchange = listener.exchange # the reactor's: it keeps nothing of a connection's
      @listener = listener
      @context = context
      @config = context.config
      @env = Request::EnvBuilder.new(context.env_template, io, @config, peer: peer)
      @task = Async::Task.current
    end

    # @return [Boolean] whether the connection is idle after serving at least one request (the
    #   first to close when the connection limit is reached and another client is waiting).
    def kept_alive_idle? = @wait.kept_alive_idle?

    # @return [Float, nil] while the connection waits on its client for a request (its first
    #   bytes, its head, or a body the app has not been given yet), the monotonic time that wait
    #   began; nil while the server works on a request or the connection speaks HTTP/2. Read,
    #   with {#client_bytes}, by Server::Eviction at max_connections.
    def client_since = @wait.since

    # @return [Integer] bytes received of what the connection waits for (see {#client_since}).
    def client_bytes = @socket.buffered_bytes

    # Closes the connection to make room at max_connections (see Server::Eviction): its spot
    # closes it when it is parked, or when the job that wakes it starts or it would park again
    # (Server::Parking::Spot#evict); else the fiber that waits on its client is stopped.
    # @return [void]
    def evict
      return if @session # never chosen (see Server::Eviction): not idle, not waiting for a request
      @spot.evict or @task&.stop
    end

    # Closes the connection if it is between requests (graceful shutdown).
    # @return [void]
    # A connection accepted before the drain that has not sent its first request yet is left
    # Server::Parking::FIRST_BYTE_GRACE to send it (its client already sent it, most likely: the bytes follow the
    # handshake) unless `fresh` says that time is up; closing it at once lost such requests.
    # @param fresh [Boolean] also close a connection that never sent a request.
    def stop_if_idle(fresh: false)
      return @http2.drain if @http2
      return @session.shutdown if @session
      return if @spot.close_if_idle(fresh)
      @task&.stop if @wait.idle? && (fresh || @wait.kept_alive_idle?)
    end

    # Serves requests until the client or the protocol ends the connection.
    # @return [void]
    def serve
      @socket.handshake(@config.header_timeout) ? serve_first : close_socket(nil)
    end

    # Serves a connection that parked before its first bytes, once they came (called by its
    # Server::Parking::Spot, in a new task).
    # @return [Symbol, nil] :parked when it parked again; else the connection is closed.
    def resume_first
      @task = Async::Task.current
      serve_first
    end

    # Serves a parked connection again once its socket is readable: the next request of an idle
    # one, or more of the body `request` waits for (called by its Server::Parking::Spot, in a
    # new task).
    # @param request [Request, nil]
    # @return [Symbol, nil] :parked when it parked again; else the connection is closed.
    def resume_requests(request)
      @task = Async::Task.current
      serve_requests(false, request)
    end

    # A parked request's body stopped arriving in time: 408 (the app is never called), then the
    # connection lingers parked, with no fiber (Server::Parking::Spot#linger).
    # @param _request [Request] the request whose body it waited for.
    # @return [Symbol, nil] :parked, or nil when the socket is closed already.
    def time_out_body(_request = nil)
      @task = nil
      reject(408, "request body timed out")
      @spot.linger
    end

    # An upgraded connection parked between messages (Server::Parking::Spot#park_until): its
    # socket is readable; its session reads and handles what came.
    # @return [Symbol, nil] :parked when it parked again; else the connection is closed.
    def readable = @session.resume

    # An upgraded connection's deadline passed (its ping, or the wait for the client's close).
    # @return [Symbol, nil] :parked when it parked again; else the connection is closed.
    def expired = @session.expire

    # A parked upgraded connection is closed from outside (the reactor is ending, or its session
    # asked): its session closes the socket and runs on_close.
    # @return [void]
    def abandoned = @session.abandon

    # Framing (see Heron::Exchange): writes the response as HTTP/1.1, unless the app took the
    # socket (full hijack); the connection is kept only while not draining and no
    # `100 Continue` is still owed.
    # @return [Symbol] :done or :hijacked.
    def write(request, status, headers, body)
      return :hijacked if @hijacked
      return upgrade(request, headers) if upgrading?(request, status)
      request.keepalive &&= !@listener.draining? && !@reader.expectation.pending?
      result = @writer.write(request, status, headers, body)
      @hijacked = true if result == :hijacked
      result
    end

    # Framing: whether body bytes are out, so a 500 can no longer replace the response.
    # @return [Boolean]
    def sent?(request) = request.bytes.positive?

    # Framing: the response cannot be finished; the connection closes after what is out (a
    # chunked body stays unterminated, so the client can tell).
    # @return [Symbol] :done
    def broken(_request) = :done

    # Framing: the client went away or stopped reading; the connection closes.
    # @return [Symbol] :done
    def gone(_request, _error) = :done

    # Framing: the app answered 100; sends `100 Continue` if the client waits for it.
    # @return [Boolean] whether it did (the app is then called again).
    def continue(_request) = @reader.continue

    private

    # A connection's first bytes (it may park until they come: Server::Parking::Spot#wait_for_first);
    # then HTTP/2 or the HTTP/1 request loop.
    # Whether it parked is this call's own result: once parked, the connection may be resumed by
    # another worker before this fiber gets here.
    def serve_first
      return parked = let_go if @spot.wait_for_first
      case @config.http2 && HTTP2::Connection.wanted?(@socket, @config.first_byte_timeout, head_deadline)
      when true then return serve_http2
      when nil then return # nothing came in time
      end
      speak_http1
      parked = serve_requests(true)
    rescue StandardError => e
      connection_failed(e)
    ensure
      close_socket(nil) unless :parked.equal?(parked) # HTTP/2, or no request came (the request loop closes its own)
    end

    # What only HTTP/1.1 uses, made once the client is known not to speak HTTP/2 (again when a
    # fresh connection resumes from parking: kept).
    def speak_http1
      @writer ||= Response::Writer.new(@socket, @context)
      @reader ||= Connection::RequestReader.new(@socket, @context, @env, -> { hijack! })
    end

    # The request loop. Returns :parked when the connection waits on in the parking lot, having
    # given up its fiber; the socket stays open for {#resume}.
    def serve_requests(first, request = nil)
      while (request ||= next_request(first))
        return parked = let_go if :parked.equal?(request)
        case @reader.wait_for_body(request, @spot)
        when :parked then return parked = let_go(request)
        when :gone then break # the client closed before its body was complete: the app is not called
        end
        first = false
        @wait.since = nil # the server's turn: not to be evicted
        in_use = @exchange.respond(request, self) # true while its callbacks still use the request
        return parked = open_session if @session
        break if @hijacked
        break unless request.keepalive && request.input.finished? || settle(request)
        request = @reader.finish(in_use) # an idle keep-alive connection holds no finished request
      end
    rescue StandardError => e
      connection_failed(e)
    ensure
      close_socket(request) unless parked # (see #serve_first)
    end

    # The connection parked: the worker moves on (a reference to its task would keep an ended
    # worker's fiber stack), and an idle one drops its parser (about 1 KiB; a request waiting
    # for its body keeps it, for its framing) and its read buffer's kept room.
    def let_go(request = nil)
      @task = nil
      unless request
        @reader&.release_parser
        @socket.release_room
      end
      :parked
    end

    # The client speaks HTTP/2 (ALPN h2, or the cleartext preface): the connection is its.
    def serve_http2
      deadline = head_deadline
      @wait.taken_over
      @http2 = HTTP2::Connection.new(@socket, @context, @exchange, @env, deadline: deadline, parking: @listener.parking)
      @http2.serve
    end

    # The next request (see Connection::RequestReader#read_request), nil when none comes, or :parked.
    def next_request(first)
      started = @wait.next_request(first, @socket) or return nil
      return started if :parked.equal?(started)
      @reader.read_request(started)
    rescue HTTPParser::Error, Request::Input::TooLarge, Request::Expectation::Failed => e
      reject(e.status, e.message)
    rescue Heron::TimeoutError
      @wait.idle? || !@socket.buffered? ? nil : reject(408, "request head timed out")
    end

    # The first request's head (or HTTP/2's preface) must be in by then, as RequestReader#read_request's
    # (while no request has been read, the connection's wait on its client began at the accept).
    def head_deadline = @wait.since + @config.header_timeout

    # Drops what the app left of the body so the next request parses from the right place.
    # Broken chunked framing found on the way ends the connection: a 400 if nothing was sent yet
    # (the response is normally out already), one log line, and no exception out of the task.
    def settle(request)
      request.keepalive && request.input.discard(@config.discard_body_limit)
    rescue HTTPParser::Error => e
      @context.logger.warn("closing connection: unread request body is malformed (#{e.message})")
      request.status ? @linger = true : reject(e.status, e.message)
      false
    end

    # The guard at the task boundary: whatever escaped the request loop is logged once and the
    # connection closes; nothing propagates into the reactor as an unhandled task exception.
    def connection_failed(error)
      @context.logger.error("connection closed after an unexpected error", error)
      @linger = true
    end

    # Also forgets the worker's task: the worker goes on to other connections, and a graceful
    # stop's #stop_if_idle, which may still reach this connection, must not stop them. While it
    # lingers (up to a second, after a 408 or with a body left unread) the task stays known, so
    # that at max_connections Server::Eviction can end the linger at once: a burst of drippers
    # cut together held every slot for that second.
    def close_socket(request)
      return @task = nil if @hijacked || @socket.closed?
      return linger_close if @linger || (request && !request.input.finished?)
      @task = nil
      @socket.close
    end

    def linger_close
      @socket.linger_close
    ensure
      @task = nil
    end

    def reject(status, message)
      @context.logger.rejected(status, message, @env.remote_addr)
      @wait.busy
      @linger = true
      @socket.write(Response::ErrorResponse.raw(status, message), @config.write_timeout)
      nil
    rescue Heron::TimeoutError, SystemCallError, IOError
      nil
    end

    # `rack.upgrade` (the API Iodine and Agoo define): the app set a handler for a request that
    # can be upgraded, and its status is not a redirection or an error. Its body is not sent.
    # The reader is asked first (most requests were offered nothing: no env lookup); the env's
    # `rack.upgrade?` is still read, so a middleware that deleted the offer is heard.
    def upgrading?(request, status)
      return false unless @reader.upgrade
      env = request.env
      env["rack.upgrade"] && env["rack.upgrade?"] && status.to_i < 300
    end

    # Writes the head that switches the connection (see Upgrade::Handshake) and makes the
    # session that serves it from now on (started by #open_session, once the exchange is over).
    # @return [Symbol] :done
    def upgrade(request, headers)
      env = request.env
      kind = env["rack.upgrade?"]
      head = Upgrade::Handshake.head(kind, env, Response::Head.normalize(headers), @context.date.line)
      request.status = kind == :websocket ? 101 : 200
      request.keepalive = false
      request.upgraded = true
      @socket.write(head, @config.write_timeout)
      codec = kind == :websocket ? WebSocket::Codec.new(@config.websocket_max_message_size) : SSE::Codec.new
      @session = Upgrade::Session.new(@spot, @listener.mailbox, @socket.io, codec, env["rack.upgrade"],
                                      Upgrade::Handshake.lasting_env(env), @context)
      :done
    end

    # The upgraded connection's life: what served HTTP is dropped (an idle WebSocket costs only
    # what it keeps), then on_open and the messages, parked between them.
    # @return [Symbol, nil] :parked, or nil once the connection is closed.
    def open_session
      @wait.taken_over
      @task = nil
      @exchange = @writer = @env = @reader = nil
      @session.open(@socket.buffered? ? @socket.consume(@socket.buffered_bytes) : nil)
    end

    # Full hijack: the app owns the socket from here; it is also left in `rack.hijack_io`, where
    # Rack 2 apps (faye-websocket, ...) look for it.
    def hijack!
      @hijacked = true
      @reader.request.env["rack.hijack_io"] = @socket.io
    end
  end
end
