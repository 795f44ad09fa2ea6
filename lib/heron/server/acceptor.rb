# frozen_string_literal: true

require "async"
require_relative "accept_backoff"
require_relative "../proxy_protocol"

module Heron
  class Server
    # A reactor thread's accept loops, one task per listening socket: each takes what is pending
    # (up to the connection registry's room), gives every socket a connection worker and, at the
    # connection limit, waits for room (see ConnectionRegistry#wait_for_room). No accept error
    # ends a loop: out of descriptors (or anything else), it backs off and tries again.
    class Acceptor
      ACCEPT_BATCH = 256
      private_constant :ACCEPT_BATCH

      # @param registry [Server::ConnectionRegistry] the reactor's open connections.
      # @param workers [Server::ConnectionWorkers] run each accepted socket.
      # @param logger [Log::Logger]
      # @yield [io, proxy] serves one accepted socket (in a worker); `proxy` is :v1 or :v2 when
      #   the listener expects a PROXY protocol header.
      def initialize(registry, workers, logger, &serve)
        @registry = registry
        @workers = workers
        @logger = logger
        @serve = serve
        @tasks = []
      end

      # Starts accepting from each listener, in a child task of `task` each.
      # @param task [Async::Task]
      # @param listeners [Array<IO>]
      # @return [void]
      def start(task, listeners)
        @tasks = listeners.map { |listener| task.async(annotation: "heron accept") { accept_loop(listener) } }
      end

      # Stops accepting (a graceful stop). A batch being handed off is handed off first.
      # @return [void]
      def stop = @tasks.each(&:stop)

      # @return [Boolean] whether every accept loop still runs.
      def running? = @tasks.all?(&:running?)

      private

      # Accepts everything pending (up to the free slots) before serving any of it: a new
      # connection's task runs at once, so accepting one per turn of the loop would leave the last
      # of a burst of connections waiting behind hundreds of requests on the first ones.
      def accept_loop(listener)
        backoff = Server::AcceptBackoff.new(@logger)
        proxy = ProxyProtocol.version_for(listener)
        loop do
          @registry.wait_for_room(listener)
          batch, delay = accept_batch(listener, backoff)
          hand_off(batch, proxy)
          @registry.rest(delay) if delay
        end
      end

      # Gives each accepted socket a fiber: a worker's (Server::ConnectionWorkers), at the loop's
      # next turn, the whole batch in this one. A drain's stop waits until all of them are handed
      # off: if it landed between two hand-offs, the sockets not yet handed off would be dropped
      # and their clients reset. The workers are the root task's children, which a drain does not
      # stop.
      def hand_off(batch, proxy)
        Async::Task.current.defer_stop do
          batch.each { |io| @workers.run { @serve.call(io, proxy) } }
        end
      end

      # @return [Array(Array<BasicSocket>, Float)] the accepted sockets, and how long to wait
      #   before the next attempt when accept failed.
      def accept_batch(listener, backoff)
        batch = []
        listener.wait_readable
        while @registry.room(batch.size).positive? && batch.size < ACCEPT_BATCH
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
    end
  end
end
