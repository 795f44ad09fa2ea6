# frozen_string_literal: true

# What it costs to wake a waiting fiber at the event loop's next turn, the way
# Server::ConnectionWorkers hands a connection to an idle worker (issue 29, point 4: fibers should
# wait and wake through async's public primitives unless a lower-level call is measured to be
# needed). One idle worker fiber, woken ROUNDS times, each time by:
#
#   unblock        Fiber.scheduler.unblock(nil, fiber), the worker in Fiber.scheduler.block(nil, nil)
#   notification   Async::Notification#signal, the worker in Async::Notification#wait
#
# (Async::Condition#signal is left out: it switches to the waiter at once, which a hand-off must
# not do, see ConnectionWorkersTest.) Each round is one hand-off and one turn of the loop (the
# caller yields), so the figure includes a turn; the difference between the rows is the wake-up's
# own cost. Reports µs and objects allocated per hand-off, best of --repeat runs.
#
#   bundle exec ruby bench/wakeups.rb [--rounds 200000] [--repeat 5]

require "async"
require "async/notification"
require "optparse"
require_relative "lib/results_page"

Bench::ResultsPage.capture("wakeups.md") if $PROGRAM_NAME == __FILE__

module Bench
  # See the file's comment.
  class Wakeups
    def initialize(rounds, repeat)
      @rounds = rounds
      @repeat = repeat
    end

    def run
      results = { "unblock" => :unblock, "notification" => :notification }.transform_values do |kind|
        Array.new(@repeat) { measure(kind) }.min_by(&:first)
      end
      puts "#{RUBY_DESCRIPTION}, async #{Async::VERSION}, #{@rounds} hand-offs per run, best of #{@repeat}", "",
           "| wake-up | µs per hand-off (with one loop turn) | objects per hand-off |", "| --- | ---: | ---: |"
      results.each { |name, (seconds, objects)| puts format("| %s | %.2f | %.1f |", name, seconds / @rounds * 1e6, objects.fdiv(@rounds)) }
    end

    private

    # @return [Array(Float, Integer)] seconds and objects allocated for @rounds hand-offs.
    def measure(kind)
      Sync do |task|
        worker = send(kind, task)
        objects = GC.stat(:total_allocated_objects)
        started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        @rounds.times do
          worker.call
          task.yield
        end
        [Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, GC.stat(:total_allocated_objects) - objects]
      ensure
        task.children.each(&:stop)
      end
    end

    # Starts a worker that waits with the scheduler's block; returns what wakes it.
    def unblock(task)
      job = nil
      fiber = nil
      task.async do
        fiber = Fiber.current
        loop do
          Fiber.scheduler.block(nil, nil) until job
          job = nil
        end
      end
      lambda do
        job = true
        Fiber.scheduler.unblock(nil, fiber)
      end
    end

    # Starts a worker that waits on an Async::Notification; returns what wakes it.
    def notification(task)
      job = nil
      wake = Async::Notification.new
      task.async do
        loop do
          wake.wait until job
          job = nil
        end
      end
      lambda do
        job = true
        wake.signal
      end
    end
  end
end

if $PROGRAM_NAME == __FILE__
  rounds = 200_000
  repeat = 5
  OptionParser.new do |o|
    o.on("--rounds N", Integer) { |n| rounds = n }
    o.on("--repeat N", Integer) { |n| repeat = n }
  end.parse!
  Bench::Wakeups.new(rounds, repeat).run
end
