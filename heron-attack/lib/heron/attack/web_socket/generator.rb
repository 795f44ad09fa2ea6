# frozen_string_literal: true

require "async"
require_relative "../resolver"
require_relative "../tls_context"
require_relative "../plan_runner"
require_relative "session"
require_relative "pending"

module Heron
  module Attack
    module WebSocket
      # The open-loop WebSocket load: connection k is due to open at start + k / connect_rate,
      # and its message j (from 1) is due at its opening's due time + j / rate, whatever the
      # server does. Each message's echo is timed from its due time (corrected) and from its send
      # (uncorrected), and each connection's upgrade from its due time. Echoes come back in order,
      # so each one answers the oldest message still waiting. With several processes, each one
      # takes every stride-th connection from offset.
      class Generator
        include PlanRunner

        # @param target [Target] the URL (ws:// given as http://, wss:// as https://) and headers.
        # @param message [String] what each message carries.
        # @param plan [Hash] connections:, connect_rate:, rate: (messages per second per
        #   connection), messages: (per connection).
        # @param timeout [Numeric] seconds for an upgrade, and for an echo.
        # @param tls [OpenSSL::SSL::SSLContext, nil] for wss:// (nil: the system's CAs).
        # @param stride [Integer] @param offset [Integer] this process's share of the connections.
        # @param progress [Progress, nil] told about the run twice a second.
        def initialize(target, message:, plan:, timeout: 30, tls: nil, stride: 1, offset: 0, progress: nil)
          @target = target
          @message = message
          @expected = message.b
          @connect_rate, @rate, @messages = plan.values_at(:connect_rate, :rate, :messages)
          @indexes = offset.step(plan.fetch(:connections) - 1, stride)
          @timeout = timeout
          @tls = tls || (target.tls? ? TLSContext.build : nil)
          @progress = progress
          @resolver = Resolver.new
        end

        # Resolves the host so a bad name fails before anything is sent.
        # @return [void]
        # @raise [SocketError]
        def resolve!
          @resolver.resolve(@target)
        end

        private

        # Opens every connection when due, each sending its messages, and waits for every echo.
        def attack(task)
          @indexes.map { |k| task.async { connection(task, @recorder.start + (k / @connect_rate)) } }.each(&:wait)
        end

        def connection(task, due)
          return unless wait_until(due)
          session = open(due) or return
          pending = Pending.new
          reader = task.async { read_echoes(session, pending) }
          send_messages(session, due, pending)
          pending.drain(@recorder, @timeout, -> { now })
        ensure
          reader&.stop
          session&.close
        end

        def open(due)
          session = Async::Task.current.with_timeout(@timeout) { Session.open(@resolver.resolve(@target), @target, tls: @tls, message: @message) }
          @recorder.connected!(due, now)
          session
        rescue StandardError => e
          @recorder.error!(due, now, e)
          nil
        end

        def send_messages(session, opened_due, pending)
          (1..@messages).each do |j|
            due = opened_due + (j / @rate)
            break unless wait_until(due) && !pending.failed?
            sent = now
            @recorder.sent!(due, sent, @message.bytesize)
            pending.push(due, sent)
            session.transmit(@message)
          end
        rescue StandardError => e
          pending.fail!(@recorder, e, now)
        end

        def read_echoes(session, pending)
          while (echo = session.receive)
            answered = pending.answer { |due, sent| record_echo(due, sent, echo) }
            raise ProtocolError, "a message no request was waiting for" unless answered
          end
          pending.fail!(@recorder, EOFError.new("the server closed the WebSocket"), now)
        rescue StandardError => e
          pending.fail!(@recorder, e, now)
        end

        def record_echo(due, sent, echo)
          return @recorder.error!(due, now, ProtocolError.new("the echo differs from the message")) unless echo == @expected
          @recorder.response!(due, sent, now, 101, echo.bytesize)
        end

        # Sleeps until the time; false when the run was stopped.
        def wait_until(time)
          wait = time - now
          sleep(wait) if wait.positive?
          !@stopping
        end
      end
    end
  end
end
