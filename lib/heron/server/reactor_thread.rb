# frozen_string_literal: true

require "async"
require_relative "../compat/io_timeout"
require "set"
require_relative "../connection"
require_relative "../proxy_protocol"
require_relative "../response/http_date"
require_relative "callback_runner"
require_relative "context"
require_relative "accept_backoff"
require_relative "load_shedder"
require_relative "eviction"
require_relative "parking"
require_relative "connection_workers"
require_relative "../clock"

module Heron
  class Server
    # One event loop (one Ruby thread): accepts from the shared listeners and runs each connection
    # in a fiber of its own, up to its connection limit. Stops on request from any thread or a
    # signal handler through a self-pipe: gracefully (drain) or immediately.
    class ReactorThread
      include Clock

      ACCEPT_BATCH = 256
      private_constant :ACCEPT_BATCH

      # @return [Server::CallbackRunner]
      attr_reader :callbacks
      # @return [Server::Context] what this loop's connections share.
      attr_reader :context
      # @return [Server::Parking] whether, when and how this loop's connections wait with no fiber.
      attr_reader :parking

      # @param server [Server] supplies app, config, logger, listeners and metrics.
      # @param max_connections [Integer] this loop's share of the connection limit.
      def initialize(server, max_connections)
        @server = server
        @app = server.app
        @config = server.config
        @logger = server.logger
        @metrics = server.metrics
        @max_connections = max_connections
        @context = Server::Context.new(server)
        @connections = Set.new
        @shedder = Server::LoadShedder.new(@config)
        @eviction = Server::Eviction.new
        @in_flight = 0
        @served = 0
        @handshakes = 0 # connections still reading their PROXY header (they count towards the limit)
        @parking = Server::Parking.new(@config, self)
        @draining = false
        @capacity = Async::Notification.new
        @wake_reader, @wake_writer = IO.pipe
      end

      # Runs the loop in the calling thread until stopped.
      # @yield once the listeners are being accepted from.
      # @return [void]
      def run(&ready)
        Sync do |task|
          attach(task)
          @workers = Server::ConnectionWorkers.new(task)
          @parking.start(task, @workers)
          accepts = @accepts = @server.listeners.map do |listener|
            task.async(annotation: "heron accept") { accept_loop(listener) }
          end
          ready&.call
          @server.heartbeat&.then { |heartbeat| task.async(annotation: "heron heartbeat") { heartbeat.run(self) } }
          control_loop(accepts)
        ensure
          @parking.close
          task.children&.each(&:stop)
        end
      ensure
        [@wake_reader, @wake_writer].each(&:close)
      end

      # Makes `task` the parent of this loop's connections and callbacks, without accepting
      # (used by {#run} and by {Testing} to serve a socket pair).
      # @param task [Async::Task]
      # @param hold_callbacks [Boolean] keep after-reply callbacks until {Server::CallbackRunner#release}.
      # @return [Server::ReactorThread] self
      def attach(task, hold_callbacks: false)
        @root = task
        @callbacks = Server::CallbackRunner.new(@logger, @config.after_reply_concurrency, observer: @metrics,
                                                                                  hold: hold_callbacks)
        self
      end

      # Serves one connected socket in the calling task until the connection ends.
      # @param io [BasicSocket]
      # @param proxy [Symbol, nil] :v1 or :v2 when the socket starts with a PROXY protocol header.
      # @return [void]
      def serve(io, proxy = nil)
        io.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, 1) if io.is_a?(TCPSocket)
        accepted = now
        peer = proxy && (handshake(io, proxy) or return)
        connection = Connection.new(io, @context, self, accepted, peer: peer)
        @connections << connection
        @metrics&.connection_opened
        parked = connection.serve == :parked
      ensure
        closed(connection) unless parked
      end

      # Asks the loop to stop; safe from any thread and from a trap handler.
      # @param graceful [Boolean] drain in-flight requests first.
      def stop(graceful: true)
        @wake_writer.write_nonblock(graceful ? "g" : "i", exception: false)
      rescue IOError
        nil
      end

      # The listener a connection reports to: {#draining?}, {#admit} and {#finished}.

      # @return [Boolean] whether a graceful stop is under way (responses say Connection: close).
      def draining? = @draining

      # @return [Boolean] whether every accept loop still runs (false once one ended with an
      #   exception or was stopped other than by a drain); read by Cluster::Heartbeat.
      def accepting? = @draining || (@accepts || []).all?(&:running?)

      # Called by a connection before it calls the app; {#finished} balances it.
      # @param request [Request]
      # @return [Array, nil] a 503 response when the request is shed (see Server::LoadShedder).
      def admit(request)
        @in_flight += 1
        return nil if @shedder.off? # the default: no sum over reactor threads, no clock read
        @shedder.check(request, [@server.in_flight, @in_flight].max, now)
      end

      # @return [Integer] requests between {#admit} and {#finished} on this loop.
      attr_reader :in_flight

      # @return [Integer] requests finished on this loop.
      attr_reader :served

      # Called by a connection after each response: access log line, then callbacks.
      # @param request [Request]
      # @return [Boolean] whether the request is still in use (its callbacks are queued), so
      #   the connection must not reuse its object for the next request.
      def finished(request)
        @in_flight -= 1
        @served += 1
        duration = now - request.started_at
        @logger.access(request.env, request.status, request.bytes, duration) if request.status
        @metrics&.request_finished(request.status || 0, duration, request.queue_seconds)
        @callbacks.schedule(request, @root)
      end

      # @return [Integer] open connections on this loop.
      def connection_count = @connections.size

      # @return [Integer] connections parked on this loop (a subset of {#connection_count}).
      def parked_count = @parking.size

      # Called when a connection has ended (by {#serve}, and by Server::Parking for a parked one).
      # @param connection [Connection, nil]
      # @return [void]
      def closed(connection)
        @metrics&.connection_closed if connection
        @connections.delete(connection)
        @capacity.signal
        @drained&.signal
      end

      private

      # Accepts everything pending (up to the free slots) before serving any of it: a new
      # connection's task runs at once, so accepting one per turn of the loop would leave the last
      # of a burst of connections waiting behind hundreds of requests on the first ones. No accept
      # error ends this loop: out of descriptors (or anything else), it backs off and tries again.
      def accept_loop(listener)
        backoff = Server::AcceptBackoff.new(@logger)
        proxy = ProxyProtocol.version_for(listener)
        loop do
          wait_for_room(listener)
          batch, delay = accept_batch(listener, backoff)
          hand_off(batch, proxy)
          rest(delay) if delay
        end
      end

      # Gives each accepted socket a fiber: a worker's (Server::ConnectionWorkers), at the loop's
      # next turn, the whole batch in this one. A drain's stop waits until all of them are handed
      # off: if it landed between two hand-offs, the sockets not yet handed off would be dropped
      # and their clients reset. The workers are the root task's children, which a drain does not
      # stop.
      def hand_off(batch, proxy)
        Async::Task.current.defer_stop do
          batch.each { |io| @workers.run { serve(io, proxy) } }
        end
      end

      # @return [Array(Array<BasicSocket>, Float)] the accepted sockets, and how long to wait
      #   before the next attempt when accept failed.
      def accept_batch(listener, backoff)
        batch = []
        listener.wait_readable
        while @connections.size + @handshakes + batch.size < @max_connections && batch.size < ACCEPT_BATCH
          io = listener.accept_nonblock(exception: false)
          break if io == :wait_readable
          batch << io
        end
        backoff.succeeded unless batch.empty?
        [batch, nil]
      rescue Errno::ECONNABORTED, Errno::EPROTO # that client gave up before it was accepted
        [batch, nil]
      rescue StandardError => e # EMFILE, ENFILE, ENOBUFS, ENOMEM, ...
        [batch, backoff.failed(e)]
      end

      # Waits `seconds`, or less if one of this loop's connections closes (freeing a descriptor).
      def rest(seconds)
        Async::Task.current.with_timeout(seconds) { @capacity.wait }
      rescue Async::TimeoutError
        nil
      end

      # At the connection limit, waits until a client is waiting to be accepted and then makes
      # room by closing the connections Server::Eviction chooses (idle keep-alive ones, else the
      # slowest clients still sending their request), or, when none may be closed (every one is
      # in the app), waits for one to close.
      def wait_for_room(listener)
        while @connections.size + @handshakes >= @max_connections
          listener.wait_readable
          @eviction.choose(@connections, now).each(&:evict)
          @capacity.wait if @connections.size + @handshakes >= @max_connections
        end
      end

      # @return [String, false] the client's address from the header, the socket's own peer when
      #   the proxy speaks for itself, or false (socket closed) when the header is bad or late.
      def handshake(io, version)
        @handshakes += 1
        ProxyProtocol.read(io, version, @config.header_timeout) || io.remote_address.ip_address
      rescue ProxyProtocol::Error, SystemCallError, IOError
        io.close
        false
      ensure
        @handshakes -= 1
      end

      # Waits for commands on the self-pipe: "g" starts a drain in its own task (so a later "i"
      # still interrupts it), "d" means the drain finished, "i" stops at once.
      def control_loop(accepts)
        loop do
          case read_command
          when "g" then @drainer ||= @root.async { drain(accepts) }
          when "i", "d" then return
          end
        end
      end

      def read_command
        @wake_reader.wait_readable
        command = @wake_reader.read_nonblock(1, exception: false)
        command == :wait_readable ? nil : command
      end

      # Keeps serving for drain_delay, then stops accepting (the server closes the listeners once
      # every reactor thread has), closes idle connections and waits for the busy ones.
      def drain(accepts)
        sleep(@config.drain_delay) if @config.drain_delay.positive?
        deadline = now + @config.shutdown_timeout
        @draining = true
        accepts.each(&:stop)
        @server.stopped_accepting
        @connections.to_a.each(&:stop_if_idle) # a parked connection closes (and leaves the set) at once
        @root.async { close_fresh_connections } # accepted before the stop, but still silent
        wait_for_connections(deadline)
        leftover = @callbacks.drain(deadline)
        leftover.each { |name| @logger.warn("after-reply callback still running at shutdown: #{name}") }
      ensure
        @wake_writer.write_nonblock("d", exception: false)
      end

      def close_fresh_connections
        sleep(Server::Parking::FIRST_BYTE_GRACE)
        @connections.to_a.each { |connection| connection.stop_if_idle(fresh: true) }
      end

      def wait_for_connections(deadline)
        @drained = Async::Notification.new
        until @connections.empty? || (left = deadline - now) <= 0
          wait_drained(left)
        end
        @logger.warn("#{@connections.size} connections still busy at shutdown timeout") unless @connections.empty?
      end

      def wait_drained(seconds)
        @root.with_timeout(seconds) { @drained.wait }
      rescue Async::TimeoutError
        nil
      end
    end
  end
end
