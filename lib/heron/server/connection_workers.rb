# frozen_string_literal: true

require "async"
require_relative "doorbell"

module Heron
  class Server
    # Long-lived tasks that serve a reactor's connections one after another: a new connection, or
    # a parked one whose next bytes came (see Server::ParkingLot), is handed to an idle worker,
    # or to a new one when none is idle. A task per connection would do the same work, but Ruby
    # gives a fiber's stack back to its pool only when the Fiber object is garbage-collected if
    # the fiber was started by `transfer` (as the fiber scheduler starts tasks): until the next
    # GC, every ended task would keep its stack, so a burst of short tasks (a burst of parked
    # connections waking up) would leave the process with one dirty stack (about 18 KiB) each.
    # Workers reuse their fibers (each job starts without the last one's fiber-local values); at
    # most MAX_IDLE wait idle, the others end. A worker whose job
    # left tasks behind (a hijacked connection's handler, an app's fire-and-forget `Async { }`)
    # ends too: those are its children, and stopping a later connection it served (a graceful
    # stop, an eviction) would stop them.
    class ConnectionWorkers
      # Idle workers kept per reactor, at least; more end once their job is done (see {#idle_room}).
      MAX_IDLE = 64

      # While many workers are busy, up to one in this many more may wait idle: requests that
      # wait long in their app (1 s sleeps at 5,000/s: 5,000 busy workers) end in bursts (the
      # timers due during a GC pause fire together) and the next requests come in bursts, so
      # with 64 idle at most, 0.17-0.32 workers per request ended and were started again
      # (a task, a fiber and about 19 objects each: bench/results/slow_requests.md).
      IDLE_PER_BUSY = 8

      # New workers started in one turn of the event loop: jobs pending past them wait a turn,
      # or are taken by a worker whose job ended. 10,000 idle connections opened 500 at a time
      # (bench/run.rb's idle row): 3.9 KiB of RSS each at 16, 4.3 at 32, 5.3 at 64, 6.4 with no
      # cap; JSON at 256 connections, wrk's p99: 5.6-7.1 ms at 16, 4.4-5.2 ms at 32.
      STARTS_PER_TURN = 32

      # An idle worker: its fiber, and the job handed to it (nil until one is). One per worker,
      # kept across its jobs.
      #
      # Workers wait with the fiber scheduler's `block` and are woken with its `unblock`, the
      # calls Ruby's own Mutex and Queue use, not with an Async::Notification: both queue the
      # worker for the loop's next turn without switching to it (an Async::Condition would
      # switch), but a Notification costs 5 objects and about twice the time per hand-off
      # (bench/wakeups.rb: 3.0 against 6.5 µs, a loop turn included, bench/results/wakeups.md),
      # and a burst of connections is a hand-off each, plus one per parked connection that wakes
      # (5,000 new connections a second at bench/slow_requests.rb's top rate). The parking lot's
      # timer, woken only when the lot stops being empty, waits on a Notification.
      Waiter = Struct.new(:fiber, :job)
      private_constant :Waiter

      # @param root [Async::Task] the parent of the workers.
      def initialize(root)
        @root = root
        @idle = [] # idle workers' Waiters, the most recently idle last
        @pending = [] # jobs waiting for a worker
        @starts_left = 0
        @busy = 0 # workers running a job
        @spawner = Doorbell.new
        @root.async(transient: true, annotation: "heron connection workers") { spawn_workers }
      end

      # @return [Integer] workers waiting for a job.
      def idle = @idle.size

      # Hands the job to an idle worker, which runs it at the event loop's next turn, or queues it
      # for a new worker. Neither switches to the job: a caller handing off a batch (the accept
      # loop, the parking lot's watcher) hands off all of it in one turn. Switching to each job at
      # once would send the caller to the back of the ready queue after every hand-off, one
      # connection per turn of a loop that may be serving hundreds.
      # @yield the job (it must handle its own errors).
      # @return [void]
      def run(&job)
        waiter = @idle.pop
        return hand(waiter, job) if waiter
        @pending << job
        @spawner.ring
      end

      private

      def hand(waiter, job)
        waiter.job = job
        Fiber.scheduler.unblock(nil, waiter.fiber)
      end

      # Starts workers for pending jobs, in one transient task woken at the loop's next turn after
      # jobs were queued (starting a task switches to it): up to STARTS_PER_TURN in one turn of
      # the loop (each new worker starts the next before running its job, so they all start in
      # this turn), then looks again at the next turn while jobs are still pending.
      def spawn_workers
        loop do
          if @pending.empty?
            @spawner.wait
          else
            spawn_turn
          end
        end
      end

      def spawn_turn
        @starts_left = STARTS_PER_TURN
        start_worker
        Async::Task.current.yield
      end

      def start_worker
        @starts_left -= 1
        @root.async(annotation: "heron connection") { |task| work(task, @pending.shift) }
      end

      # Runs the job, then the next pending one, and waits idle when none is left. Jobs that end
      # without waiting (connections that park at once) share a worker rather than a fiber
      # each: a fiber's stack pages stay dirty once touched, and 10,000 idle connections opened
      # 500 at a time, each with its own worker, cost 6.4 KiB of RSS per connection instead of 3.
      def work(task, job)
        waiter = Waiter.new(Fiber.current, nil)
        while job
          start_worker if @starts_left.positive? && !@pending.empty?
          run_job(job)
          job = task.children? ? nil : @pending.shift || next_job(waiter)
          forget_locals if job
        end
      end

      def run_job(job)
        @busy += 1
        job.call
      ensure
        @busy -= 1
      end

      # A new job starts without the last one's fiber-local values (Thread.current[]), as it
      # would in a fiber of its own: one client's state (an app's current user, say) must not
      # reach the next connection.
      def forget_locals
        thread = Thread.current
        thread.keys.each { |key| thread[key] = nil }
      end

      # Waits idle for a job (nil at once when as many workers as {#idle_room} are idle already).
      def next_job(waiter)
        return nil if @idle.size >= idle_room
        @idle << waiter
        waiting = true
        Fiber.scheduler.block(nil, nil) until waiter.job
        taken = waiter.job
        waiter.job = nil
        taken
      ensure
        forsake(waiter) if waiting && !taken
      end

      # @return [Integer] how many workers may wait idle: MAX_IDLE, or one per IDLE_PER_BUSY busy.
      def idle_room = [MAX_IDLE, @busy / IDLE_PER_BUSY].max

      # A worker stopped while idle leaves the idle list; a job handed to it before it could run
      # goes to another worker (lost, it left a parked connection that nothing would serve or
      # close, and a graceful stop waited for it until shutdown_timeout).
      def forsake(waiter)
        return @idle.delete(waiter) unless waiter.job
        @pending << waiter.job
        @spawner.ring
      end
    end
  end
end
