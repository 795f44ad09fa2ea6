# frozen_string_literal: true

require "async"
require_relative "../compat/io_timeout"
require_relative "../compat/timer_heap"
require_relative "../connection"
require_relative "../proxy_protocol"
require_relative "../response/http_date"
require_relative "callback_runner"
require_relative "context"
require_relative "load_shedder"
require_relative "acceptor"
require_relative "connection_registry"
require_relative "parking"
require_relative "connection_workers"
require_relative "wake_pipe"
require_relative "../upgrade/mailbox"
require_relative "../clock"

module Heron
  class Server
    # One event loop (one Ruby thread): its Server::Acceptor accepts from the shared listeners,
    # each connection runs in a fiber of a Server::ConnectionWorkers worker and is kept in the
    # Server::ConnectionRegistry (the connection limit, eviction), idle ones wait in
    # Server::Parking. The loop itself is the listener each connection reports its requests to
    # (admission, the access log, after-reply callbacks), and stops on request from any thread or
    # a signal handler through its Server::WakePipe: gracefully (drain) or immediately.
    class ReactorThread
      include Clock

      # @return [Server::CallbackRunner]
      attr_reader :callbacks
      # @return [Server::Context] what this loop's connections share.
      attr_reader :context
      # @return [Server::Parking] whether, when and how this loop's connections wait with no fiber.
      attr_reader :parking
      # @return [Heron::Exchange] the Rack exchange of this loop's requests, one for all its
      #   connections: it keeps nothing of a connection's, and one per connection was one object
      #   more for each request to touch, cold, at 256 connections (bench/results/per_core.md,
      #   "Main against 35cf1cd at 256 connections").
      attr_reader :exchange

      # @param server [Server] supplies app, config, logger, listeners and metrics.
      # @param max_connections [Integer] this loop's share of the connection limit.
      def initialize(server, max_connections)
        @server = server
        @context = Server::Context.new(server)
        @registry = Server::ConnectionRegistry.new(max_connections, server.metrics)
        @parking = Server::Parking.new(server.config, self)
        @exchange = Exchange.new(@context, self)
        @shedder = Server::LoadShedder.new(server.config)
        @in_flight = 0
        @served = 0
        @draining = false
        @commands = Server::WakePipe.new
      end

      # Runs the loop in the calling thread until stopped.
      # @yield once the listeners are being accepted from.
      # @return [void]
      def run(&ready)
        Sync do |task|
          attach(task)
          workers = Server::ConnectionWorkers.new(task)
          @parking.start(task, workers)
          @acceptor = Server::Acceptor.new(@registry, workers, @context.logger) { |io, proxy| serve(io, proxy) }
          @acceptor.start(task, @server.listeners)
          ready&.call
          @server.heartbeat&.then { |heartbeat| task.async(annotation: "heron heartbeat") { heartbeat.run(self) } }
          control_loop
        ensure
          @parking.close
          task.children&.each(&:stop)
        end
      ensure
        @commands.close
      end

      # Makes `task` the parent of this loop's connections and callbacks, without accepting
      # (used by {#run} and by {Testing} to serve a socket pair).
      # @param task [Async::Task]
      # @param hold_callbacks [Boolean] keep after-reply callbacks until {Server::CallbackRunner#release}.
      # @return [Server::ReactorThread] self
      def attach(task, hold_callbacks: false)
        @root = task
        @callbacks = Server::CallbackRunner.new(@context.logger, config.after_reply_concurrency,
                                                observer: @context.metrics, hold: hold_callbacks)
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
        @registry.add(connection)
        parked = connection.serve == :parked
      ensure
        closed(connection) unless parked
      end

      # Asks the loop to stop; safe from any thread and from a trap handler.
      # @param graceful [Boolean] drain in-flight requests first.
      # @return [void]
      def stop(graceful: true) = @commands.stop(graceful: graceful)

      # The listener a connection reports to: {#draining?}, {#admit} and {#finished}.

      # @return [Boolean] whether a graceful stop is under way (responses say Connection: close).
      def draining? = @draining

      # @return [Boolean] whether every accept loop still runs (false once one ended with an
      #   exception or was stopped other than by a drain); read by Cluster::Heartbeat.
      def accepting? = @draining || @acceptor.nil? || @acceptor.running?

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
        @context.logger.access(request.env, request.status, request.bytes, duration) if request.status
        @context.metrics&.request_finished(request.status || 0, duration, request.queue_seconds)
        @callbacks.schedule(request, @root)
      end

      # @return [Integer] open connections on this loop.
      def connection_count = @registry.size

      # @return [Integer] connections parked on this loop (a subset of {#connection_count}).
      def parked_count = @parking.size

      # Called when a connection has ended (by {#serve}, and by Server::Parking for a parked one).
      # @param connection [Connection, nil]
      # @return [void]
      def closed(connection) = @registry.closed(connection)

      # @return [Upgrade::Mailbox] where other threads hand writes to this loop's `rack.upgrade`
      #   connections (made when the first one opens, on this loop's thread).
      def mailbox = @mailbox ||= Upgrade::Mailbox.new(@root, @context.logger)

      private

      def config = @context.config

      # @return [String, false] the client's address from the header, the socket's own peer when
      #   the proxy speaks for itself, or false (socket closed) when the header is bad or late.
      def handshake(io, version)
        @registry.handshake { ProxyProtocol.read(io, version, config.header_timeout) || io.remote_address.ip_address }
      rescue ProxyProtocol::Error, SystemCallError, IOError
        io.close
        false
      end

      # Waits for commands on the wake pipe: a graceful stop starts a drain in its own task (so a
      # later immediate stop still interrupts it); an immediate stop, or the drain's end, ends it.
      def control_loop
        loop do
          case @commands.next_command
          when :graceful then @drainer ||= @root.async { drain }
          when :immediate, :drained then return
          end
        end
      end

      # Keeps serving for drain_delay, then stops accepting (the server closes the listeners once
      # every reactor thread has), closes idle connections and waits for the busy ones.
      def drain
        sleep(config.drain_delay) if config.drain_delay.positive?
        deadline = now + config.shutdown_timeout
        @draining = true
        @parking.drain
        @acceptor.stop
        @server.stopped_accepting
        @registry.to_a.each(&:stop_if_idle) # a parked connection closes (and leaves the registry) at once
        @root.async { close_fresh_connections } # accepted before the stop, but still silent
        wait_for_connections(deadline)
        leftover = @callbacks.drain(deadline)
        leftover.each { |name| @context.logger.warn("after-reply callback still running at shutdown: #{name}") }
      ensure
        @commands.drained
      end

      def close_fresh_connections
        sleep(Server::Parking::FIRST_BYTE_GRACE)
        @registry.to_a.each { |connection| connection.stop_if_idle(fresh: true) }
      end

      def wait_for_connections(deadline)
        return if @registry.wait_until_empty(deadline)
        @context.logger.warn("#{@registry.size} connections still busy at shutdown timeout")
      end
    end
  end
end
