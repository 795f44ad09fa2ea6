# frozen_string_literal: true

require "async"

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
      # Idle workers kept per reactor; more end once their job is done.
      MAX_IDLE = 64

      # @param root [Async::Task] the parent of the workers.
      def initialize(root)
        @root = root
        @idle = [] # the wakeups of idle workers, the most recently idle last
      end

      # @return [Integer] workers waiting for a job.
      def idle = @idle.size

      # Runs the job at once (as starting a task would) in an idle worker, or in a new worker.
      # @yield the job (it must handle its own errors).
      # @return [void]
      def run(&job)
        return @idle.pop.signal(job) unless @idle.empty?
        @root.async(annotation: "heron connection") { |task| work(task, job) }
      end

      private

      def work(task, job)
        wakeup = Async::Condition.new
        while job
          job.call
          job = task.children? ? nil : next_job(wakeup)
          forget_locals if job
        end
      end

      # A new job starts without the last one's fiber-local values (Thread.current[]), as it
      # would in a fiber of its own: one client's state (an app's current user, say) must not
      # reach the next connection.
      def forget_locals
        thread = Thread.current
        thread.keys.each { |key| thread[key] = nil }
      end

      def next_job(wakeup)
        return nil if @idle.size >= MAX_IDLE
        @idle << wakeup
        wakeup.wait
      ensure
        @idle.delete(wakeup)
      end
    end
  end
end
