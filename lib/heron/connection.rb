# frozen_string_literal: true

require_relative "connection/buffered_socket"
require_relative "connection/body_pace"
require_relative "request/input"
require_relative "request/rewindable_input"
require_relative "request"
require_relative "request/expectation"
require_relative "request/env_builder"
require_relative "response/writer"
require_relative "response/error_response"
require_relative "exchange"
require_relative "response/early_hints"
require_relative "http2/connection"
require_relative "upgrade/handshake"
require_relative "upgrade/session"
require_relative "websocket/codec"
require_relative "sse/codec"
require_relative "clock"

module Heron
  # Serves one client connection, in its own fiber: reads each request head with the C parser,
  # calls the app, writes the response, then loops for keep-alive and pipelined requests.
  class Connection
    include Clock

    CONTINUE = "HTTP/1.1 100 Continue\r\n\r\n"
    private_constant :CONTINUE

    # Seconds a connection accepted before a graceful stop has, once the stop began, to send its
    # first request.
    FIRST_BYTE_GRACE = 1.0

    # How long, and for how many bytes, a connection whose request body timed out while parked
    # keeps dropping what its client still sends after the 408 (as BufferedSocket#linger_close).
    LINGER_SECONDS = 1.0
    LINGER_BYTES = 256 * 1024

    # @param io [BasicSocket] the accepted socket.
    # @param context [Server::Context] the app, configuration, logger and what connections share.
    # @param listener [#draining?, #admit, #finished, #parking?, #park, #release, #hot_wait] told of each
    #   request (the reactor thread): `draining?` whether to take another request,
    #   `admit(request)` before the app is called (a response when the request is shed),
    #   `finished(request)` after the response; `parking?` whether it can park connections,
    #   `park(connection, io, deadline, lane)` to wait with no fiber (see Server::ParkingLot),
    #   `release(connection, io)` to close a parked idle one, `hot_wait(quick) { }` to wait for
    #   the next request in the fiber for a while (:busy when too many do and the client is not quick).
    # @param accepted_at [Float] monotonic time of accept.
    # @param peer [String, nil] the client's address from a PROXY protocol header.
    def initialize(io, context, listener, accepted_at, peer: nil)
      @context = context
      @listener = listener
      @config = context.config
      @socket = Connection::BufferedSocket.new(io, context.scratch_buffer)
      @exchange = Exchange.new(context, listener)
      @env = Request::EnvBuilder.new(context.env_template, io, @config, peer: peer)
      @accepted_at = accepted_at
      @client_since = accepted_at # waiting for the client's first request
      @idle = true
      @task = Async::Task.current
      @parkable = listener.parking? && @socket.parkable?
      @prebuffer = @parkable && @config.prebuffer_body.positive?
      @park_after = @config.keepalive_park_after if @parkable && @config.keepalive_park_after < @config.keepalive_timeout
      @quick = false # whether the last request came quickly (see #next_request_ready)
    end

    # @return [Boolean] whether the connection is idle after serving at least one request (the
    #   first to close when the connection limit is reached and another client is waiting).
    def kept_alive_idle? = @idle && @kept_alive

    # @return [Float, nil] while the connection waits on its client for a request (its first
    #   bytes, its head, or a body the app has not been given yet), the monotonic time that wait
    #   began; nil while the server works on a request or the connection speaks HTTP/2. Read,
    #   with {#client_bytes}, by Server::Eviction at max_connections.
    attr_reader :client_since

    # @return [Integer] bytes received of what the connection waits for (see {#client_since}).
    def client_bytes = @socket.buffered_bytes

    # Closes the connection to make room at max_connections (see Server::Eviction): at once
    # when it is parked, else by stopping the fiber that waits on its client. One the parking
    # lot has just handed to a worker (its bytes came or its deadline passed, and the job is
    # queued) or whose expiry is running closes when that job starts or parks it again: before,
    # nothing closed it, and the accept loop waited for some other connection to close, with
    # the process idle, for up to the next dripper's cut (the 3-7 s outliers in
    # bench/results/connection_cap.md).
    # @return [void]
    def evict
      return if @session # never chosen (see Server::Eviction): not idle, not waiting for a request
      @evicted = true
      return @listener.release(self, @socket.io) if @parked
      @task&.stop
    end

    # Closes the connection if it is between requests (graceful shutdown).
    # @return [void]
    # A connection accepted before the drain that has not sent its first request yet is left
    # FIRST_BYTE_GRACE to send it (its client already sent it, most likely: the bytes follow the
    # handshake) unless `fresh` says that time is up; closing it at once lost such requests.
    # @param fresh [Boolean] also close a connection that never sent a request.
    def stop_if_idle(fresh: false)
      return @http2.drain if @http2
      return @session.shutdown if @session
      return @listener.release(self, @socket.io) if @parked == :idle || (@parked == :fresh && fresh)
      @task&.stop if @idle && (@kept_alive || fresh)
    end

    # Serves requests until the client or the protocol ends the connection.
    # @return [void]
    def serve
      @socket.handshake(@config.header_timeout) ? serve_first : close_socket(nil)
    end

    # Serves a parked connection again (see Server::ParkingLot), in a new task, once its socket
    # is readable: the next request of an idle one, or the request whose body it was waiting for.
    # @return [Symbol, nil] :parked when it parked again; else the connection is closed.
    def resume
      return @session.resume if @session
      return evicted if @evicted
      @task = Async::Task.current
      kind = @parked
      request = @waiting
      @quick = now - @idle_since < @park_after if kind == :idle
      @parked = @waiting = nil
      return linger if :linger.equal?(kind)
      kind == :fresh ? serve_first : serve_requests(false, request)
    end

    # Ends a parked connection whose deadline passed: an idle one closes, one whose request body
    # stopped arriving gets 408 (the app was never called) and lingers parked (see #time_out_body).
    # @return [Symbol, nil] :parked when it lingers; else the connection is closed.
    def expire
      return @session.expire if @session
      return evicted if @evicted
      request = @waiting
      @parked = @waiting = nil
      return time_out_body if request
      @socket.close # an idle or silent connection, or a linger whose time is up
      nil
    end

    # Closes a parked connection at once (the reactor is stopping, or it was evicted).
    # @return [void]
    def close_parked
      return @session.abandon if @session
      @parked = @waiting = nil
      @socket.close
    end

    # Framing (see Heron::Exchange): writes the response as HTTP/1.1, unless the app took the
    # socket (full hijack); the connection is kept only while not draining and no
    # `100 Continue` is still owed.
    # @return [Symbol] :done or :hijacked.
    def write(request, status, headers, body)
      return :hijacked if @hijacked
      return upgrade(request, headers) if upgrading?(request, status)
      request.keepalive &&= !@listener.draining? && !@expectation.pending?
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
    def continue(_request)
      return false unless @expectation.pending?
      send_continue(@expectation)
      true
    end

    private

    # A connection's first bytes: a plain one that has sent nothing yet parks until it does (so a
    # burst of new connections holds no fibers while their requests travel); then HTTP/2 or the
    # HTTP/1 request loop.
    # Whether it parked is this call's own result, never @parked: once parked, the connection
    # may be resumed by another worker (which clears @parked) before this fiber gets here.
    def serve_first
      return parked = park(:fresh) if @parkable && !@socket.buffered? && :wait_readable.equal?(@socket.fill_now)
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
      @writer ||= Response::Writer.new(@socket, @config, @context.date)
      @hijack ||= -> { hijack! }
    end

    # The request loop. Returns :parked when the connection waits on in the parking lot, having
    # given up its fiber; the socket stays open for {#resume}.
    def serve_requests(first, request = nil)
      while (request ||= next_request(first))
        return parked = park(:idle) if :idle.equal?(request)
        case @prebuffer && @parser.content_length && prebuffered_body
        when :waiting then return parked = park_body(request)
        when :gone then break # the client closed before its body was complete: the app is not called
        end
        first = false
        respond(request)
        return parked = open_session if @session
        break if @hijacked
        break unless request.keepalive && request.input.finished? || settle(request)
        request = @expectation = @pace = recycle(request) # an idle keep-alive connection holds no finished request
      end
    rescue StandardError => e
      connection_failed(e)
    ensure
      close_socket(request) unless parked # (see #serve_first)
    end

    # Hands the connection to the parking lot: an idle one until its keep-alive deadline (counted
    # from the end of the last response), one waiting for its body until the body's next deadline
    # (body_timeout, min_body_rate).
    def park(kind, request = nil, deadline = nil)
      return evicted if @evicted
      @idle_since = now if kind == :idle # for #resume: was the client quick?
      deadline ||= park_deadline(kind)
      @parked = kind
      @task = nil # the worker moves on; a reference would keep an ended worker's fiber stack
      @parser = nil unless request # about 1 KiB; a parked request keeps it (its body's framing)
      @parked_at = now if request # for min_body_rate: the wait counts once it ends (#prebuffered_body)
      @waiting = request
      @listener.park(self, @socket.io, deadline, kind)
      :parked
    end

    def park_deadline(kind)
      case kind
      when :fresh then @accepted_at + first_byte_wait
      when :idle then @idle_since + @config.keepalive_timeout - @park_after
      when :linger then @linger_until
      else now + (@pace ? @pace.next_wait : @config.body_timeout)
      end
    end

    # Parks a request until more of its body comes. When its pace allows no more waiting
    # (min_body_rate: the bytes that woke it came too late) it parks past its deadline: the
    # parking lot answers it 408 at the pace it cuts slow clients (Server::ParkingLot::PACED).
    def park_body(request)
      park(:body, request)
    rescue Heron::TimeoutError
      park(:body, request, now)
    end

    # A parked request's body stopped arriving in time: 408 (the app is never called), then the
    # connection lingers parked, with no fiber, until its client closes or LINGER_SECONDS pass.
    # When thousands of slow clients are cut together (they all connected together), lingering
    # in a fiber each held thousands of fibers and timers, and every new connection's fiber
    # waited behind them.
    # @return [Symbol, nil] :parked, or nil when the socket is closed already.
    def time_out_body
      @task = nil
      reject(408, "request body timed out")
      return nil unless @socket.shut_write
      @linger_until = now + LINGER_SECONDS
      @linger_left = LINGER_BYTES
      linger
    end

    # Drops what the client sent since; parks again while time and bytes are left, else closes.
    def linger
      dropped = @socket.drain_now(@linger_left)
      return park(:linger) if dropped && (@linger_left -= dropped).positive? && now < @linger_until
      @socket.close
      nil
    end

    # Reads what has come of the request's body: the app is not called until `prebuffer_body`
    # bytes of it (or all of it) are buffered, so a client that sends its body slowly waits
    # parked, not in an app's fiber blocked in rack.input.read. Chunked bodies and
    # `Expect: 100-continue` stream as before (the client waits for the app). Returns :waiting
    # (park until more comes), :gone (the client closed first) or nil (call the app).
    def prebuffered_body
      return nil unless (want = body_wanted)
      received = 0
      while @socket.buffered_bytes < want
        count = @socket.fill_now
        break unless count.is_a?(Integer)
        received += count
      end
      @pace&.waited(@parked_at ? now - @parked_at : 0, received)
      @parked_at = nil
      return :waiting if count.is_a?(Symbol)
      :gone if count.nil?
    end

    def body_wanted
      return nil unless (length = @parser.content_length)&.positive? && !@expectation.pending?
      want = length < @config.prebuffer_body ? length : @config.prebuffer_body
      want if @socket.buffered_bytes < want
    end

    # The client speaks HTTP/2 (ALPN h2, or the cleartext preface): the connection is its.
    def serve_http2
      @idle = false
      @client_since = nil
      @http2 = HTTP2::Connection.new(@socket, @context, @exchange, @env, deadline: head_deadline)
      @http2.serve
    end

    def next_request(first)
      started = wait_for_request(first) or return nil
      return started if :idle.equal?(started)
      env = @env.fresh
      read_head(env, started) or return nil
      build_request(env, started)
    rescue HTTPParser::Error, Request::Input::TooLarge, Request::Expectation::Failed => e
      @context.app_failure.rejected(e, env || {}, e.status)
      reject(e.status, e.message)
    rescue Heron::TimeoutError
      @idle || !@socket.buffered? ? nil : reject(408, "request head timed out")
    end

    def read_head(env, started)
      deadline = started + @config.header_timeout
      (@parser ||= @context.new_parser).reset # made for the first request, and again after parking
      until (length = @socket.parse_head(@parser, env))
        @socket.fill(time_left(deadline)) or return nil
      end
      @socket.skip(length)
      started
    end

    # Waits for the first byte of the next request. While nothing is buffered the connection is
    # idle, so a graceful stop may close it. Returns :idle when a kept-alive connection is to
    # park (see #next_request_ready).
    def wait_for_request(first)
      @idle = !@socket.buffered?
      @kept_alive = !first
      @client_since = now unless first
      ready = first ? @socket.buffered? || @socket.fill(first_byte_wait) : next_request_ready
      return ready unless ready
      return (@listener.draining? ? nil : :idle) if :idle.equal?(ready)
      @idle = false
      @client_since = first ? @accepted_at : now
    end

    # A kept-alive connection between requests. The fiber first gives up its turn: a client that
    # always has its next request ready would otherwise keep the loop here and starve every other
    # connection. Once a drain has begun it takes no new request. If nothing has come, it waits
    # in its fiber (keepalive_park_after when parking, else keepalive_timeout), so a client that
    # sends its next request at once pays nothing, then gives :idle, to park. At most
    # Server::ReactorThread::HOT_WAITS connections of a reactor wait in their fiber at once; the
    # others park at once, so a burst of connections does not leave a fiber (and its stack
    # pages) each; except a quick one (@quick: its last request came while it waited in its
    # fiber, or within keepalive_park_after of parking), whose client is busy, not idle.
    def next_request_ready
      Fiber.scheduler.yield
      return true if @socket.buffered?
      return false if @listener.draining?
      return @socket.fill(@config.keepalive_timeout) unless @park_after
      ready = @socket.fill_now
      return ready unless :wait_readable.equal?(ready)
      ready = @listener.hot_wait(@quick) { @socket.readable?(@park_after) && @socket.fill(@config.header_timeout) }
      @quick = ready.is_a?(Integer) # else it parks (the wake-up tells) or closes
      ready == false || :busy.equal?(ready) ? :idle : ready
    end

    # The first request's head (or HTTP/2's preface) must be in by then, as HTTP/1.1's read_head.
    def head_deadline = @accepted_at + @config.header_timeout

    def first_byte_wait
      return @config.first_byte_timeout unless @listener.draining?
      [@config.first_byte_timeout, FIRST_BYTE_GRACE].min
    end

    def build_request(env, started)
      length = body_length
      expect = Request::Expectation.for(env, @parser.http_minor, length)
      @pace = body_pace(length)
      input = new_input(length, expect)
      input = Request::RewindableInput.new(input, threshold: @config.body_spool_threshold) if @config.rewindable_input?
      @env.complete(env, input, started)
      env["rack.hijack"] = @hijack
      (kind = Upgrade::Handshake.kind(env)) and env["rack.upgrade?"] = kind
      send_continue(expect) if expect.pending? && @config.continue_mode == :eager
      @expectation = expect
      request = @spare&.reuse(env, input, @parser.keepalive?, @parser.http_minor, started)
      @spare = nil
      request ||= Request.new(env, input, @parser.keepalive?, @parser.http_minor, started)
      offer_early_hints(request) if @config.early_hints && request.http11?
      request
    end

    # `rack.early_hints`: a 103 written at once, between the request and its response (the
    # writer is made once per connection: one object per request, not two).
    def offer_early_hints(request)
      @hint_writer ||= lambda do |headers|
        @socket.write(Response::Head.build(103, Response::Head.normalize(headers), ""), @config.write_timeout)
      end
      request.env["rack.early_hints"] = Response::EarlyHints.new(request, @hint_writer)
    end

    # Keeps the finished request's object, emptied, for the connection's next request, unless
    # the listener still uses it (its after-reply callbacks are queued). Returns nil.
    def recycle(request)
      @spare = request.clear if @recyclable
      nil
    end

    # The request's `rack.input`: for a request without a body, the connection's one empty input,
    # which has nothing to read, holds neither the socket nor the parser and never changes
    # (frozen), so one is made per connection instead of one per request.
    def new_input(length, expect)
      return @empty_input ||= Request::Input.new(nil, nil, 0, @config).freeze if length&.zero?
      Request::Input.new(@socket, @parser, length, @config, continue_hook(expect), @pace, @context.gc_pacer,
                         @context.body_budget)
    end

    def body_length
      return nil if @parser.chunked?
      length = @parser.content_length || 0
      limit = @config.max_body_size
      raise Request::Input::TooLarge, "request body of #{length} bytes exceeds #{limit}" if limit && length > limit
      length
    end

    # Bodies must keep min_body_rate (see Connection::BodyPace); none is needed for an empty one.
    def body_pace(length)
      return nil if length&.zero? || @config.min_body_rate.zero?
      Connection::BodyPace.new(@config.body_timeout, @config.min_body_rate, @config.body_rate_grace)
    end

    def continue_hook(expect)
      expect.pending? ? ->(_input) { send_continue(expect) } : nil
    end

    def send_continue(expect)
      return unless expect.pending?
      @socket.write(CONTINUE, @config.write_timeout) if !@socket.buffered?
      expect.answered!
    end

    def respond(request)
      @request = request # for hijack!, which sets its rack.hijack_io
      @client_since = nil # the server's turn: not to be evicted
      @recyclable = !@exchange.respond(request, self)
    ensure
      @request = nil # an idle connection holds no finished request
    end

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

    # An evicted connection out of the parking lot (see #evict) closes instead of going on.
    def evicted
      close_parked
      nil
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
      @idle = false
      @linger = true
      @socket.write(Response::ErrorResponse.raw(status, message), @config.write_timeout)
      nil
    rescue Heron::TimeoutError, SystemCallError, IOError
      nil
    end

    # `rack.upgrade` (the API Iodine and Agoo define): the app set a handler for a request that
    # can be upgraded, and its status is not a redirection or an error. Its body is not sent.
    def upgrading?(request, status)
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
      @session = Upgrade::Session.new([self, @listener], @socket.io, codec, env["rack.upgrade"],
                                      Upgrade::Handshake.lasting_env(env), @context, parkable: @parkable)
      :done
    end

    # The upgraded connection's life: what served HTTP is dropped (an idle WebSocket costs only
    # what it keeps), then on_open and the messages, parked between them.
    # @return [Symbol, nil] :parked, or nil once the connection is closed.
    def open_session
      @idle = false
      @client_since = nil
      @task = nil
      @exchange = @writer = @env = @parser = @spare = @hint_writer = @hijack = @expectation = @pace = @empty_input = nil
      @session.open(@socket.buffered? ? @socket.consume(@socket.buffered_bytes) : nil)
    end

    # Full hijack: the app owns the socket from here; it is also left in `rack.hijack_io`, where
    # Rack 2 apps (faye-websocket, ...) look for it.
    def hijack!
      @hijacked = true
      @request.env["rack.hijack_io"] = @socket.io
    end

    def time_left(deadline)
      left = deadline - now
      raise Heron::TimeoutError, "request head timed out" if left <= 0
      left
    end
  end
end
