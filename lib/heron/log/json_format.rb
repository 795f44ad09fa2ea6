# frozen_string_literal: true

require "json"
require_relative "clock"

module Heron
  module Log
    # The JSON log format: one JSON object per line, for access lines, server events and the banner.
    class JSONFormat
      def initialize
        @clock = Clock.new("%Y-%m-%dT%H:%M:%S", utc: true)
      end

      # @param env [Hash] the request's Rack env.
      # @param status [Integer] the response status.
      # @param bytes [Integer, nil] response body bytes sent.
      # @param duration [Float] seconds spent on the request.
      # @return [String] one line: time, remote_addr, method, path, query, protocol, status, bytes
      #   and duration_ms.
      def access(env, status, bytes, duration)
        line(time: time, remote_addr: env["REMOTE_ADDR"], method: env["REQUEST_METHOD"],
             path: text("#{env['SCRIPT_NAME']}#{env['PATH_INFO']}"), query: query(env),
             protocol: env["SERVER_PROTOCOL"], status: status, bytes: bytes,
             duration_ms: (duration * 1000).round(3))
      end

      # @param level [Symbol] :info, :warn or :error.
      # @param message [String] what happened.
      # @param exception [Exception, nil] added as "error": class, message, backtrace and cause.
      # @return [String] one line.
      def event(level, message, exception = nil)
        fields = { time: time, level: level, pid: Process.pid, message: text(message) }
        fields[:error] = failure(exception) if exception
        line(fields)
      end

      # @param info [Hash] :version, :ruby, :environment, :pid, :mode and :urls of the starting server.
      # @return [String] one line with level "info" and message "Heron started".
      def banner(info)
        line({ time: time, level: :info, message: "Heron started" }.merge(info))
      end

      private

      def time
        "#{@clock.stamp_ms}Z"
      end

      def line(fields)
        "#{JSON.generate(fields)}\n"
      end

      def query(env)
        query = env["QUERY_STRING"]
        query.nil? || query.empty? ? nil : text(query)
      end

      # Request bytes need not be UTF-8; JSON needs them to be.
      def text(string)
        return string if string.ascii_only? || (string.encoding == Encoding::UTF_8 && string.valid_encoding?)
        string.dup.force_encoding(Encoding::UTF_8).scrub
      end

      def failure(exception)
        error = { class: exception.class.name, message: text(exception.message.to_s),
                  backtrace: exception.backtrace || [] }
        error[:cause] = failure(exception.cause) if exception.cause
        error
      end
    end
  end
end
