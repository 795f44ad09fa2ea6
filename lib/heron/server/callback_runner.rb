# frozen_string_literal: true

require "async"
require_relative "../clock"

module Heron
  class Server
    # Runs `rack.response_finished` and `rack.after_reply` callbacks once a response's last byte
    # is written, in tasks of their own, so they hold up neither the connection's next request nor
    # anyone else. At most `concurrency` requests' callbacks run at once; the rest queue, none are
    # dropped. A callback that raises is logged and the others still run.
    class CallbackRunner
      # @param logger [Log::Logger]
      # @param concurrency [Integer] requests whose callbacks may run at once.
      # @param observer [#after_reply_enqueued, #after_reply_finished, nil] metrics, optional.
      # @param hold [Boolean] keep scheduled callbacks until {#release} (for tests).
      def initialize(logger, concurrency, observer: nil, hold: false)
        @hold = hold
        @logger = logger
        @concurrency = concurrency
        @observer = observer
        @queue = []
        @running = {}
        @sleepers = []
        @workers = 0
        @idle = Async::Notification.new
      end

      # Queues the request's callbacks; returns at once. Runs them in one of at most
      # `concurrency` long-lived worker tasks: an idle worker is woken (just that one), or a new
      # one started, so a request with callbacks costs a queue push, not a new fiber.
      # @param request [Request]
      # @param parent [Async::Task] the task the workers run under.
      # @return [Boolean] whether the request was queued (it had callbacks), so is still in use.
      def schedule(request, parent)
        return false unless callbacks?(request.env)
        @observer&.after_reply_enqueued
        @queue << request
        dispatch(parent) unless @hold
        true
      end

      # @return [Integer] requests whose callbacks are queued or running.
      def backlog
        @queue.size + @running.size
      end

      # Starts callbacks that were held (see `hold:`), then waits for them.
      # @param parent [Async::Task]
      # @return [void]
      def release(parent)
        @hold = false
        @queue.size.times { dispatch(parent) }
        drain(Float::INFINITY)
      end

      # Waits until every queued callback has run, or the deadline passes.
      # @param deadline [Float] monotonic time.
      # @return [Array<String>] descriptions of callbacks still running at the deadline.
      def drain(deadline)
        while backlog.positive?
          left = deadline - Clock.now
          break if left <= 0
          wait_idle(left)
        end
        @running.values.flat_map { |env| names(env) }
      end

      private

      def dispatch(parent)
        if (sleeper = @sleepers.pop)
          sleeper.signal
        elsif @workers < @concurrency
          start(parent)
        end
      end

      def wait_idle(seconds)
        Async::Task.current.with_timeout(seconds) { @idle.wait }
      rescue Async::TimeoutError
        nil
      end

      def callbacks?(env)
        after = env["rack.after_reply"]
        finished = env["rack.response_finished"]
        # The two Arrays the env was given, with no call each (every request comes here).
        return !(after.empty? && finished.empty?) if after.instance_of?(Array) && finished.instance_of?(Array)
        list_present?(after) || list_present?(finished)
      end

      def list_present?(list)
        return !list.empty? if list.instance_of?(Array) # what the env holds unless the app replaced it
        list.respond_to?(:each) && !list.empty?
      end

      # A worker runs queued requests' callbacks, then sleeps until woken. It is transient, so it
      # never keeps a finished reactor (or a Heron::Testing block) alive.
      def start(parent)
        @workers += 1
        parent.async(annotation: "heron after-reply", transient: true) do |task|
          wakeup = Async::Notification.new
          loop { work(task, wakeup) }
        ensure
          @workers -= 1
        end
      end

      def work(task, wakeup)
        while (request = @queue.shift)
          run(task, request)
        end
        @idle.signal if backlog.zero?
        sleep_until_woken(wakeup)
      end

      def sleep_until_woken(wakeup)
        @sleepers << wakeup
        wakeup.wait
      ensure
        @sleepers.delete(wakeup)
      end

      def run(task, request)
        env = request.env
        @running[task] = env
        started = Clock.now
        finished(env, request)
        Array(env["rack.after_reply"]).each { |callback| invoke(callback) }
        env["heron.after_reply_duration"] = Clock.now - started
      ensure
        @running.delete(task)
        @observer&.after_reply_finished
      end

      def finished(env, request)
        Array(env["rack.response_finished"]).reverse_each do |callback|
          invoke(callback, env, request.status, request.headers, request.error)
        end
      end

      def invoke(callback, *args)
        callback.call(*args)
      rescue StandardError, ScriptError => e
        @logger.error("after-reply callback #{describe(callback)} raised", e)
      end

      def names(env)
        (Array(env["rack.response_finished"]) + Array(env["rack.after_reply"])).map { |c| describe(c) }
      end

      def describe(callback)
        return "proc at #{callback.source_location&.join(':')}" if callback.is_a?(Proc)
        callback.class.name || callback.inspect
      end
    end
  end
end
