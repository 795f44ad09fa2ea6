# frozen_string_literal: true

require "async"

module Heron
  module Upgrade
    # Where other threads hand `rack.upgrade` writes and closes to a reactor thread, which owns
    # its connections' sockets (Session): a background thread publishing to WebSockets, or a
    # request on another reactor thread (`threads 2`). One per reactor thread, made when its
    # first session opens; one task delivers in order. The
    # queue is a Thread::Queue, whose `pop` waits through the fiber scheduler and whose `push`
    # from another thread wakes it.
    class Mailbox
      # @param root [Async::Task] the reactor's root task, parent of the delivering task.
      # @param logger [Log::Logger]
      def initialize(root, logger)
        @queue = Thread::Queue.new
        @logger = logger
        @task = root.async(transient: true, annotation: "heron rack.upgrade mailbox") { deliver }
      end

      # Queues a call to run on the reactor thread; returns at once. Safe from any thread.
      # @param session [Upgrade::Session]
      # @param name [Symbol] :write or :close.
      # @param args [Array]
      # @return [true]
      def post(session, name, *args)
        @queue << [session, name, args]
        true
      end

      private

      def deliver
        while (item = @queue.pop)
          hand(*item)
        end
      end

      def hand(session, name, args)
        session.public_send(name, *args)
      rescue StandardError => e
        @logger.error("rack.upgrade #{name} handed over from another thread raised", e)
      end
    end
  end
end
