# frozen_string_literal: true

require "async"
require "async/condition"
require_relative "client"
require_relative "http2/client"
require_relative "worker_pool"
require_relative "recorder"
require_relative "target_picker"
require_relative "schedule"
require_relative "clock"
require_relative "plan_runner"

module Heron
  module Attack
    # The open-loop request scheduler. Request i of the plan is due at start + i / rate (or,
    # when the rate varies, when the {Schedule} has offered i requests) no matter how earlier
    # requests fare; each runs in its own fiber, so a slow server makes
    # requests pile up in flight instead of silently slowing the generator down (the
    # coordinated-omission trap of closed-loop tools). With several processes, each one takes
    # every stride-th request from offset, so the due times interleave.
    class Generator
      include PlanRunner

      # @param targets [TargetPicker, Array<Target>] chooses each request's target (an Array is
      #   used round robin by weight).
      # @param rate [Float] requests per second of the whole run (all processes), when no schedule.
      # @param schedule [Schedule, nil] the offered rate over time (all processes).
      # @param total [Integer] requests in the whole run.
      # @param timeout [Numeric] seconds per request.
      # @param keepalive [Boolean] reuse connections.
      # @param tls [OpenSSL::SSL::SSLContext, nil] the context for https:// targets (see {Client}).
      # @param connections [Integer, nil] most requests in flight at once; nil for no cap.
      # @param stride [Integer] @param offset [Integer] this process's share of the indexes.
      # @param output [IO, nil] where to print one line per request, or nil.
      # @param progress [Progress, nil] told about the run twice a second.
      # @param max_streams [Integer, nil] speak HTTP/2 ({HTTP2::Client}) with this many streams per
      #   connection over `connections` connections (1 when nil); requests beyond connections x
      #   max_streams wait for a stream, as lateness. nil speaks HTTP/1.1.
      def initialize(targets, total:, rate: nil, schedule: nil, timeout: 30, keepalive: true, tls: nil, connections: nil,
                     stride: 1, offset: 0, output: nil, progress: nil, max_streams: nil)
        @picker = targets.is_a?(TargetPicker) ? targets : TargetPicker.new(targets)
        @schedule = schedule || Schedule.constant(rate.to_f, total / rate.to_f)
        @indexes = offset.step(total - 1, stride)
        @client = client(timeout, keepalive, tls, connections, max_streams)
        connections = (connections || 1) * max_streams if max_streams
        @workers = WorkerPool.new(connections) { |index, due| perform(index, due) }
        @output = output
        @progress = progress
        @in_flight = 0
        @finished = Async::Condition.new
      end

      # Resolves every target's host so a bad name fails before anything is sent.
      # @return [void]
      # @raise [SocketError]
      def resolve!
        @picker.targets.each { |target| @client.resolve(target) }
      end

      private

      # Sends every request of the plan and waits for every response.
      def attack(task)
        schedule(task)
        @finished.wait while @in_flight.positive?
        @workers.stop
        @client.close
      end

      def client(timeout, keepalive, tls, connections, max_streams)
        return Client.new(timeout: timeout, keepalive: keepalive, tls: tls) unless max_streams
        HTTP2::Client.new(timeout: timeout, tls: tls, connections: connections || 1, max_streams: max_streams)
      end

      def schedule(task)
        @indexes.each do |index|
          due = @recorder.start + @schedule.due(index)
          wait = due - now
          sleep(wait) if wait.positive?
          break if @stopping
          launch(task, index, due)
        end
      end

      def launch(task, index, due)
        @in_flight += 1
        @workers.dispatch(task, index, due)
      end

      def perform(index, due)
        target = @picker.for(index)
        sent = now
        @recorder.sent!(due, sent, target.body_bytes, @schedule.stage_index(index))
        print(outcome(index, due, sent, target))
      ensure
        @in_flight -= 1
        @finished.signal if @in_flight.zero?
      end

      # Sends the request and records what happened.
      # @return [String, nil] the per-request line when there is an output.
      def outcome(index, due, sent, target)
        response = @client.call(target)
        done = now
        @recorder.response!(due, sent, done, response.status, response.bytes)
        @output && format("request %d status=%d latency=%.1fms\n", index + 1, response.status, (done - due) * 1e3)
      rescue StandardError => e
        kind = @recorder.error!(due, now, e)
        @output && format("request %d error=%s latency=%.1fms\n", index + 1, kind, (now - due) * 1e3)
      end

      # Per-request lines stop, without failing the run, once the reader goes away (e.g. `| head`).
      def print(line)
        @output&.write(line) if line
      rescue IOError, SystemCallError
        @output = nil
      end
    end
  end
end
