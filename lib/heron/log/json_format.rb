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
      # @param worker [Integer, nil] the cluster worker's index; the key is left out when nil.
      # @return [String] one line: time, level, pid, worker, request_id, remote_addr, method, path,
      #   query, protocol, status, bytes, duration_ms, user_agent and referer.
      def access(env, status, bytes, duration, worker = nil)
        fields = { time: time, level: :info, pid: Process.pid }
        fields[:worker] = worker if worker
        fields.merge!(request_id: env["heron.request_id"], remote_addr: env["REMOTE_ADDR"], method: env["REQUEST_METHOD"],
                      path: text("#{env['SCRIPT_NAME']}#{env['PATH_INFO']}"), query: query(env),
                      protocol: env["SERVER_PROTOCOL"], status: status, bytes: bytes,
                      duration_ms: (duration * 1000).round(3))
        line(fields.merge!(user_agent: optional_text(env["HTTP_USER_AGENT"]), referer: optional_text(env["HTTP_REFERER"])))
      end

      # @param level [Symbol] :info, :warn or :error.
      # @param message [String] what happened.
      # @param exception [Exception, nil] added as "error": class, message, backtrace and cause.
      # @param details [Hash, nil] structured fields added to the object (e.g. an N+1 finding's
      #   query and count, a rejected request's status and peer); they cannot replace the
      #   fields above.
      # @param worker [Integer, nil] the cluster worker's index; the key is left out when nil.
      # @return [String] one line.
      def event(level, message, exception = nil, details = nil, worker = nil)
        fields = { time: time, level: level, pid: Process.pid }
        fields[:worker] = worker if worker
        fields[:message] = text(message)
        fields[:error] = failure(exception) if exception
        return line(fields) unless details
        line(fields.merge(details) { |_key, ours, _theirs| ours })
      rescue JSON::GeneratorError # details that are not valid UTF-8: the message still goes out
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

      def optional_text(value)
        value.nil? || value.empty? ? nil : text(value)
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
