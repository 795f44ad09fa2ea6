# frozen_string_literal: true

require_relative "../clock"
require_relative "close_began"

module Heron
  module Upgrade
    # Where an upgraded connection that cannot park (TLS, no epoll, parking off) waits for its
    # client: in the fiber that opened it, until the socket is readable or a deadline passes. A
    # close begun from outside cuts the wait short ({#interrupt}), so the connection waits again
    # for its close deadline instead of its ping deadline. A {Session} makes one only where it
    # cannot park.
    class FiberWait
      include Clock

      # @return [Float] monotonic time the next {#wait} ends at the latest.
      attr_accessor :deadline

      # @param io [IO] the socket.
      def initialize(io)
        @io = io
        @deadline = 0.0
      end

      # Waits until the socket is readable or the {#deadline}.
      # @return [Symbol] :readable, :expired, or :interrupted (a close began meanwhile).
      def wait
        @fiber = Fiber.current
        @io.wait_readable([@deadline - now, 0].max) ? :readable : :expired
      rescue CloseBegan
        :interrupted
      ensure
        @fiber = nil
      end

      # Cuts a wait under way short (it returns :interrupted); nothing when none is.
      # @return [void]
      def interrupt
        Fiber.scheduler.raise(@fiber, CloseBegan) if @fiber
      end
    end
  end
end
