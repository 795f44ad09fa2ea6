# frozen_string_literal: true

require_relative "clock"

module Heron
  module Log
    # The plain-text log format: access lines in the Combined Log Format (Common Log Format plus
    # referer and user agent, which log tools read as they are), then the duration in seconds and
    # `key=value` fields; and "time [pid] LEVEL message" lines for server events.
    class CommonFormat
      ESCAPES = { '"' => '\\"', "\\" => "\\\\" }.freeze
      UNSAFE = /["\\\x00-\x1f\x7f]/
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
      # @param worker [Integer, nil] the cluster worker's index; nil in a single process.
      # @return [String] one line, e.g. `127.0.0.1 - - [22/Nov/2026:01:02:03 +0000] "GET /a?q
      #   HTTP/1.1" 200 12 "-" "curl/8.5.0" 0.0012 level=info pid=4242 request_id=3f9c2a7b1e04-1k`.
      def access(env, status, bytes, duration, worker = nil)
        "#{env['REMOTE_ADDR'] || '-'} - - [#{@access_clock.stamp}] " \
          "\"#{env['REQUEST_METHOD']} #{target(env)} #{env['SERVER_PROTOCOL']}\" " \
          "#{status} #{bytes || '-'} #{quoted(env['HTTP_REFERER'])} #{quoted(env['HTTP_USER_AGENT'])} " \
          "#{seconds(duration)} level=info pid=#{Process.pid}#{" worker=#{worker}" if worker}" \
          "#{" request_id=#{env['heron.request_id']}" if env['heron.request_id']}\n"
      end

      # @param level [Symbol] :info, :warn or :error.
      # @param message [String] what happened.
      # @param exception [Exception, nil] its class, message, backtrace and causes are appended.
      # @param _fields [Hash] structured details, for the JSON format; here the message says it all.
      # @param worker [Integer, nil] the cluster worker's index, shown as "[pid/worker]".
      # @return [String] one or more lines, written at once.
      def event(level, message, exception = nil, _fields = nil, worker = nil)
        line = "#{@event_clock.stamp} [#{Process.pid}#{"/#{worker}" if worker}] #{level.to_s.upcase} #{message}"
        exception ? "#{line}#{failure(exception, ': ')}\n" : "#{line}\n"
      end

      # @param info [Hash] :version, :ruby, :environment, :pid, :mode and :urls of the starting server.
      # @return [String] the start-up banner's lines.
      def banner(info)
        lines = ["Heron #{info[:version]} (ruby #{info[:ruby]}), #{info[:environment]} environment, " \
                 "pid #{info[:pid]}", "* Mode: #{info[:mode]}"]
        lines.concat(info[:urls].map { |url| "* Listening on #{url}" })
        lines << "* Control on #{info[:control]}" if info[:control]
        lines << "Use Ctrl-C to stop"
        "#{lines.join("\n")}\n"
      end

      private

      # A header value as a quoted field ("-" when absent), with quotes, backslashes and control
      # bytes escaped so a client cannot forge or break a line.
      def quoted(value)
        return '"-"' if value.nil? || value.empty?
        value = value.b unless value.valid_encoding?
        return "\"#{value}\"" unless UNSAFE.match?(value)
        "\"#{value.gsub(UNSAFE) { |char| ESCAPES[char] || format('\\x%02x', char.ord) }}\""
      end

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
