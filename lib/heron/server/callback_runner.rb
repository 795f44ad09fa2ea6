# frozen_string_literal: true

require "async"

module Heron
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
      @idle = Async::Notification.new
    end

    # Queues the request's callbacks; returns at once.
    # @param request [Request]
    # @param parent [Async::Task] the task the callback tasks run under.
    # @return [void]
    def schedule(request, parent)
      return unless callbacks?(request.env)
      @observer&.after_reply_enqueued
      @queue << request
      start(parent) if !@hold && @running.size < @concurrency
    end

    # Starts callbacks that were held (see `hold:`), then waits for them.
    # @param parent [Async::Task]
    # @return [void]
    def release(parent)
      @hold = false
      start(parent) until @queue.empty? || @running.size >= @concurrency
      drain(Float::INFINITY)
    end

    # @return [Integer] requests whose callbacks are queued or running.
    def backlog
      @queue.size + @running.size
    end

    # Waits until every queued callback has run, or the deadline passes.
    # @param deadline [Float] monotonic time.
    # @return [Array<String>] descriptions of callbacks still running at the deadline.
    def drain(deadline)
      while backlog.positive?
        left = deadline - Process.clock_gettime(Process::CLOCK_MONOTONIC)
        break if left <= 0
        wait_idle(left)
      end
      @running.values.flatten
    end

    private

    def wait_idle(seconds)
      Async::Task.current.with_timeout(seconds) { @idle.wait }
    rescue Async::TimeoutError
      nil
    end

    def callbacks?(env)
      list_present?(env["rack.after_reply"]) || list_present?(env["rack.response_finished"])
    end

    def list_present?(list)
      list.respond_to?(:each) && !list.empty?
    end

    def start(parent)
      request = @queue.shift
      parent.async(annotation: "heron after-reply") do |task|
        while request
          run(task, request)
          request = @queue.shift
        end
        @idle.signal if backlog.zero?
      end
    end

    def run(task, request)
      env = request.env
      @running[task] = names(env)
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      finished(env, request)
      Array(env["rack.after_reply"]).each { |callback| invoke(callback) }
      env["heron.after_reply_duration"] = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
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
