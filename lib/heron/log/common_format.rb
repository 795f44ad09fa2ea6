# frozen_string_literal: true

require_relative "clock"

module Heron
  module Log
    # The plain-text log format: Common Log Format access lines with the duration appended, and
    # "time [pid] LEVEL message" lines for server events.
    class CommonFormat
      ACCESS_TIME = "%d/%b/%Y:%H:%M:%S %z"
      EVENT_TIME = "%Y-%m-%d %H:%M:%S %z"

      def initialize
        @access_clock = Clock.new(ACCESS_TIME)
        @event_clock = Clock.new(EVENT_TIME)
      end

      # @param env [Hash] the request's Rack env.
      # @param status [Integer] the response status.
      # @param bytes [Integer, nil] response body bytes sent; nil shows as "-".
      # @param duration [Float] seconds spent on the request.
      # @return [String] one line, e.g.
      #   `127.0.0.1 - - [22/Nov/2026:01:02:03 +0000] "GET /a?q HTTP/1.1" 200 12 0.0012`.
      def access(env, status, bytes, duration)
        "#{env['REMOTE_ADDR'] || '-'} - - [#{@access_clock.stamp}] " \
          "\"#{env['REQUEST_METHOD']} #{target(env)} #{env['SERVER_PROTOCOL']}\" " \
          "#{status} #{bytes || '-'} #{seconds(duration)}\n"
      end

      # @param level [Symbol] :info, :warn or :error.
      # @param message [String] what happened.
      # @param exception [Exception, nil] its class, message, backtrace and causes are appended.
      # @return [String] one or more lines, written at once.
      def event(level, message, exception = nil)
        line = "#{@event_clock.stamp} [#{Process.pid}] #{level.to_s.upcase} #{message}"
        exception ? "#{line}#{failure(exception, ': ')}\n" : "#{line}\n"
      end

      # @param info [Hash] :version, :ruby, :environment, :pid, :mode and :urls of the starting server.
      # @return [String] the start-up banner's lines.
      def banner(info)
        lines = ["Heron #{info[:version]} (ruby #{info[:ruby]}), #{info[:environment]} environment, " \
                 "pid #{info[:pid]}", "* Mode: #{info[:mode]}"]
        lines.concat(info[:urls].map { |url| "* Listening on #{url}" })
        lines << "Use Ctrl-C to stop"
        "#{lines.join("\n")}\n"
      end

      private

      def target(env)
        query = env["QUERY_STRING"]
        path = "#{env['SCRIPT_NAME']}#{env['PATH_INFO']}"
        query.nil? || query.empty? ? path : "#{path}?#{query}"
      end

      # Seconds with four decimals; faster than Kernel#format on the hot path.
      def seconds(duration)
        tenths_of_ms = (duration * 10_000).round
        fraction = (tenths_of_ms % 10_000).to_s
        "#{tenths_of_ms / 10_000}.#{'0' * (4 - fraction.size)}#{fraction}"
      end

      def failure(exception, prefix)
        text = "#{prefix}#{exception.class}: #{exception.message}#{backtrace(exception)}"
        exception.cause ? text + failure(exception.cause, "\nCaused by: ") : text
      end

      def backtrace(exception)
        (exception.backtrace || []).map { |frame| "\n    #{frame}" }.join
      end
    end
  end
end
