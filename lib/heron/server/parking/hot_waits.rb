# frozen_string_literal: true

require_relative "../../clock"
require_relative "../doorbell"

module Heron
  class Server
    class Parking
      # The deadline of every hot wait of one reactor (a kept-alive connection waiting in its
      # fiber for its next request, up to keepalive_park_after: see Parking#hot_wait), kept by
      # one task instead of a scheduler timer per wait.
      #
      # `io.wait_readable(timeout)` under the fiber scheduler makes a timer (an
      # IO::Event::Timers::Handle and a Proc) per call. A timer cancelled in the loop turn that
      # made it is dropped at once, but one cancelled later (the client's next request came a
      # little later) stays in the scheduler's heap until its own deadline: with an app that
      # allocates, thousands of them per second lived through minor GCs, were promoted and
      # died old, bringing on major GCs (bench/results/per_core.md, "Hot waits without a
      # timer each").
      #
      # Here a waiter waits with no timeout, listed with its deadline; every hot wait lasts the
      # same time, so the list is in deadline order. One watcher task sleeps until the oldest
      # deadline (one timer per sleep, not per wait) and wakes each waiter past it with the
      # scheduler's `resume`, which switches to the fiber at once, as async's own timeout
      # callback does, so nothing can run between the check that the fiber still waits here
      # and its wake-up: a fiber whose socket became readable first has left the list (its
      # wait's `ensure`) and is never woken out of a later wait.
      class HotWaits
        include Clock

        # @param root [Async::Task] parent of the watcher task.
        # @param timeout [Float] seconds each wait lasts at most.
        def initialize(root, timeout)
          @timeout = timeout
          @waiters = {} # Fiber => deadline, oldest first
          @watcher = Doorbell.new # the watcher waits on it for a first waiter, with no timer
          root.async(transient: true, annotation: "heron hot waits") { watch }
        end

        # @return [Integer] fibers waiting now.
        def size = @waiters.size

        # Waits in the calling fiber until `socket` is readable, at most the timeout.
        # @param socket [Connection::BufferedSocket] its IO is waited on (a TLS socket's through
        #   its TCP socket: what OpenSSL already holds was read before).
        # @return [Boolean] false when nothing came in time.
        def readable?(socket)
          fiber = Fiber.current
          first = @waiters.empty? # else the watcher waits for an earlier deadline, not for a ring
          @waiters[fiber] = now + @timeout
          @watcher.ring if first
          wait(socket.io.to_io)
        ensure
          @waiters.delete(fiber)
        end

        private

        # The scheduler's io_wait called from Ruby, not through IO#wait_readable: that C method
        # calls the scheduler back, another VM loop on the fiber's machine stack, and every
        # collection scans that stack while the connection waits here, as each of 256 busy
        # connections does between its requests (about 1.1 KiB less each: gc_per_request_test;
        # bench/results/per_core.md, "What grows from 16 to 256 connections"). The watcher's
        # wake-up at the deadline comes back as false or nil, readiness as the events.
        def wait(io) = Fiber.scheduler.io_wait(io, IO::READABLE, nil) ? true : false

        # Sleeps until the oldest deadline and wakes that waiter if it still waits; with no
        # waiter, waits (with no timer) for one.
        def watch
          loop do
            fiber, deadline = @waiters.first
            if fiber.nil?
              @watcher.wait
            elsif (left = deadline - now).positive?
              sleep(left)
            else
              expire(fiber)
            end
          end
        end

        # Wakes a waiter whose time is up: its `wait_readable` returns nil, as at a timeout. This
        # task goes on at the loop's next turn (one expiry per turn).
        def expire(fiber)
          @waiters.delete(fiber)
          Fiber.scheduler.resume(fiber, nil)
        end
      end
    end
  end
end
