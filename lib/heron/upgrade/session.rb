# frozen_string_literal: true

require "async"
require_relative "../clock"
require_relative "../websocket/frame"
require_relative "../websocket/protocol_error"
require_relative "callbacks"
require_relative "client"
require_relative "ending"
require_relative "fiber_wait"
require_relative "outbox"

module Heron
  module Upgrade
    # A connection the app took with `rack.upgrade` (a WebSocket or an SSE stream), from its
    # response head on. Between messages it waits parked (Server::Parking::Spot#park_until),
    # with no fiber: the connection's objects and this one are all it costs. When the socket is
    # readable a worker fiber reads what came, calls the handler's `on_message` for each whole
    # message in order, and parks it again; at its ping deadline it pings (a WebSocket that
    # stays silent a whole interval more is closed). Writes go out at once when the socket takes
    # them; the rest waits in an {Outbox}, bounded by `websocket_max_pending`, whose one flush
    # task empties it, `on_drained` after. The codec (WebSocket::Codec, SSE::Codec) says what
    # goes on the wire. How it ends (the close deadline, the linger) is its {Ending}; where it
    # cannot park it waits in its fiber ({FiberWait}).
    #
    # Whoever runs it (the request's fiber for {#open}, a worker for {#resume} and {#expire})
    # owns it until it parks again; {#open}, {#resume} and {#expire} return :parked, or nil once
    # the connection is closed (on_close has run). Anything else that ends it (a broken write,
    # an overflow) while it is parked has its spot evict it.
    class Session
      include Clock
      include Callbacks

      READ_SIZE = 16 * 1024
      # Reads per wake-up before the connection parks again (the kernel wakes it at once if
      # more is there), so one busy client cannot hold a worker.
      READS_PER_TURN = 16
      private_constant :READ_SIZE, :READS_PER_TURN

      # @return [Upgrade::Client] what the handler's callbacks receive.
      attr_reader :client
      # @return [Object] the handler the app set in `rack.upgrade`.
      attr_reader :handler

      # @param spot [Server::Parking::Spot] the connection's spot: {#settle} parks it there
      #   between messages (waking the connection's `readable`, `expired` or `abandoned`, which
      #   come here). Where it cannot park (no epoll, parking off, TLS), the connection waits in
      #   its fiber instead.
      # @param mailbox [Upgrade::Mailbox] the reactor thread's, for writes from other threads.
      # @param io [BasicSocket] the raw socket.
      # @param codec [WebSocket::Codec, SSE::Codec]
      # @param handler [Object] the app's callback object.
      # @param env [Hash] the upgraded request's env.
      # @param context [Server::Context] configuration and logger.
      def initialize(spot, mailbox, io, codec, handler, env, context)
        @spot = spot
        @io = io
        @codec = codec
        @handler = handler
        @context = context
        @client = Client.new(self, env)
        @thread = Thread.current # the reactor thread: others hand their writes and closes to it
        @mailbox = mailbox
        @state = :open # :closing once the server sent its close frame, :closed once it is over
        @heard = true # something came from the client since the last ping
      end

      # Runs on_open, then what the client sent behind its request, then parks.
      # @param leftover [String, nil] bytes that came after the request head.
      # @return [Symbol, nil] :parked, or nil when the connection is closed.
      def open(leftover)
        callback(:on_open)
        @buffer = leftover
        receive if @buffer
        state = settle
        state = wait_readable while :waiting.equal?(state)
        state
      end

      # The socket is readable: reads what came and handles each whole message, then parks.
      # @return [Symbol, nil] :parked, or nil when the connection is closed.
      def resume
        @parked = false
        READS_PER_TURN.times do
          break if @state == :closed || !read_some
        end
        settle
      end

      # The ping deadline passed: pings (or closes a peer silent since the last ping); a close
      # the server began that got no answer ends here.
      # @return [Symbol, nil] :parked, or nil when the connection is closed.
      def expire
        @parked = false
        return finish if @state == :closing || !@heard
        @heard = !@codec.answers_pings?
        transmit(@codec.ping)
        settle
      end

      # Graceful stop: on_shutdown (in a task of its own when the handler has one), then close
      # (a WebSocket sends 1001 and waits for the client's close frame).
      # @return [void]
      def shutdown
        return unless @state == :open
        return close(1001, "server shutting down") unless @handler.respond_to?(:on_shutdown)
        Async::Task.current.async(annotation: "heron on_shutdown") do
          callback(:on_shutdown)
          close(1001, "server shutting down")
        end
      end

      # The reactor closes the parked connection (it is ending, or the listener released it).
      # @return [void]
      def abandon
        @state = :closed
        @parked = false
        finish
      end

      # See Client#write. From another thread the write is handed to the reactor thread's
      # mailbox, and true means it was scheduled while the connection was open.
      # @raise [TypeError] for anything but a String.
      def write(data)
        raise TypeError, "rack.upgrade clients write Strings, not #{data.class}" unless data.is_a?(String)
        return @state == :open && @mailbox.post(self, :write, data.dup) unless Thread.current.equal?(@thread)
        @state == :open && transmit(@codec.message(data))
      end

      # See Client#close. A WebSocket sends its close frame behind what is queued and waits for
      # the client's, up to Ending's close wait (a parked one is parked again with that
      # deadline); an SSE stream closes once the queue is empty.
      # @param code [Integer]
      # @param reason [String]
      # @return [void]
      def close(code = 1000, reason = "")
        return @mailbox.post(self, :close, code, reason) unless Thread.current.equal?(@thread)
        return unless @state == :open
        @state = :closing
        ending.close_began
        frame = @codec.close(code, reason)
        return @outbox ? ending.after_drain = true : terminate unless frame
        transmit(frame)
        wait_for_close
      end

      # @return [Boolean]
      def open? = @state == :open

      # @return [Integer] see Client#pending.
      def pending
        return -1 if @state == :closed
        @outbox ? @outbox.size : 0
      end

      private

      # @return [Ending] made once the connection starts to end.
      def ending = (@ending ||= Ending.new)

      # @return [Boolean] whether to read again (false: nothing more there, or the end).
      # Reads into the reactor's shared read buffer, then copies what came (a message, mostly
      # small) into this connection's own: a fresh 16 KiB String per read cost a malloc of that
      # size per message, and the malloc growth brought major GCs that stalled every connection
      # (echo p99 107 ms at 10,000 open and 1,000 messages/s; see bench/results/websocket_idle.md).
      def read_some
        data = @io.read_nonblock(READ_SIZE, @context.scratch_buffer, exception: false)
        return false if data == :wait_readable
        return gone unless data
        @heard = true
        (@buffer ||= String.new(capacity: data.bytesize, encoding: Encoding::BINARY)) << data
        receive
        true
      rescue SystemCallError, IOError
        gone
      end

      def gone
        @state = :closed
        false
      end

      # Handles each whole message in the buffer.
      def receive
        while @state != :closed && (message = @codec.read(@buffer))
          handle(*message)
        end
        @buffer = nil if @buffer&.empty?
      rescue WebSocket::ProtocolError => e
        fail_connection(e.code, e.message)
      end

      def handle(opcode, payload)
        case opcode
        when WebSocket::Frame::TEXT, WebSocket::Frame::BINARY then callback(:on_message, payload) if @state == :open
        when WebSocket::Frame::PING then transmit(@codec.pong(payload))
        when WebSocket::Frame::CLOSE then closed_by_client(payload.first)
        end
      end

      # The client's close frame: answered with its code (unless the server sent its own
      # first), then the server closes the TCP connection (RFC 6455 section 7.1.1).
      def closed_by_client(code)
        transmit(@codec.close(code == 1005 ? 1000 : code)) if @state == :open
        @state = :closed
      end

      # A protocol error or a limit: the close frame with its code, then the connection ends
      # (after a linger, so the client reads the frame rather than a reset).
      def fail_connection(code, message)
        @context.logger.warn("closing WebSocket: #{message} (#{code})")
        transmit(@codec.close(code, message)) if @state != :closed
        @state = :closed
        ending.linger = true
        @buffer = nil
      end

      # Parks until the next message (or the close reply), or ends a closed connection.
      def settle
        return finish if @state == :closed
        closing = @state == :closing
        deadline = closing ? ending.close_by : now + @context.config.websocket_ping_interval
        return wait_in_fiber(deadline) unless @spot.park_until(deadline, closing: closing)
        @parked = true
        :parked
      end

      # A close began while the connection waits for its client (from another connection's
      # callback or another thread): it waits for the client's close frame until its close
      # deadline, not its ping deadline. Parked, it is parked again (unless a worker is about to
      # resume it, which parks it so in {#settle}); waiting in its fiber, that wait is cut short.
      def wait_for_close
        return unless @state == :closing
        return @spot.wait_for_close(ending.close_by) if @parked
        @fiber_wait&.interrupt
      end

      # Without parking, {#open} waits in the fiber until the socket is readable or `deadline`.
      def wait_in_fiber(deadline)
        (@fiber_wait ||= FiberWait.new(@io)).deadline = deadline
        :waiting
      end

      # {#open}'s wait in the fiber, until the socket is readable ({#resume}), the deadline
      # ({#expire}), or a close from outside ({#wait_for_close}: waits again, for the close).
      def wait_readable
        case @fiber_wait.wait
        when :readable then resume
        when :expired then expire
        else settle
        end
      end

      # Closes the socket and runs on_close, once.
      # @return [nil]
      def finish
        @state = :closed
        drop_outbox
        ending.drain(@io, @context.scratch_buffer)
        @io.close unless @io.closed?
        callback(:on_close) if ending.finish
        nil
      rescue IOError, SystemCallError
        nil
      end

      # Ends the connection from outside its owner: at once when it is parked, else when its
      # owner finishes its turn.
      def terminate
        @state = :closed
        drop_outbox
        @spot.evict if @parked
        false
      end

      def drop_outbox
        @outbox&.clear
        @outbox = nil
      end

      # Sends `bytes` now, or queues what the socket does not take.
      # @return [Boolean] false when the connection is closed (or closes for it).
      def transmit(bytes)
        return false if @state == :closed || bytes.nil?
        return enqueue(bytes) if @outbox
        written = @io.write_nonblock(bytes, exception: false)
        return true if written == bytes.bytesize
        enqueue(written.is_a?(Integer) ? bytes.byteslice(written, bytes.bytesize - written) : bytes)
      rescue SystemCallError, IOError
        terminate
      end

      # Queues what the socket did not take; the outbox's task sends it as the client reads.
      def enqueue(bytes)
        limit = @context.config.websocket_max_pending
        @outbox ||= Outbox.new(@io, limit)
        return overflow(@outbox.bytes + bytes.bytesize, limit) unless @outbox.push(bytes)
        @outbox.flush_in_background(@context.config.write_timeout) { |done| done ? drained : terminate }
        true
      end

      def overflow(bytes, limit)
        @context.logger.warn("closing #{@client.env['PATH_INFO']}: the client does not read " \
                             "(#{bytes} bytes pending, websocket_max_pending #{limit})")
        terminate
      end

      # The queue is empty: on_drained (and the close that waited for it).
      def drained
        return if @state == :closed
        @outbox = nil
        callback(:on_drained)
        terminate if @ending&.after_drain
      end

      # Calls a handler callback if it has it; one that raises is logged, and the connection
      # closed with 1011 (internal error).
      def callback(name, *args)
        close(1011, "internal error") unless run_callback(name, *args) || name == :on_close
      end
    end
  end
end
