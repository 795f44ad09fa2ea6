# frozen_string_literal: true

require_relative "../version"
require_relative "common_format"
require_relative "json_format"
require_relative "query_redactor"
require_relative "rate_limiter"

module Heron
  module Log
    # What the server writes: an access line per request to `config.log_io`, and events (info,
    # warnings, errors with backtraces) to `config.error_io`, in the format `config.log_format`
    # names. With `config.logger` (any object with #info, #warn and #error, such as a ::Logger or
    # Rails.logger) every line goes to it instead, at its level, formatted the same way. Each
    # entry is written with a single IO#write, so lines from different threads and fibers never
    # interleave. A failing log IO (closed, broken pipe) or a raising logger never fails a request.
    class Logger
      FORMATS = { common: CommonFormat, json: JSONFormat }.freeze
      # Rejected malformed requests logged per second at most; the rest are counted.
      REJECTIONS_PER_SECOND = 10

      class << self
        # @return [Integer, nil] the cluster worker's index this process serves as (set by
        #   Cluster::Worker after the fork), written in every line; nil in a single process and
        #   in the master.
        attr_accessor :worker
      end

      # @param config [Heron::Configuration] reads log_io, error_io, logger, quiet, log_requests,
      #   log_format, profile_token, environment.
      def initialize(config)
        @config = config
        @log_io = unbuffered(config.log_io)
        @error_io = unbuffered(config.error_io)
        @foreign = config.logger
        @access = config.log_requests && !config.quiet
        @format = FORMATS.fetch(config.log_format).new
        token = config.respond_to?(:profile_token) && config.profile_token # heron-profiler's setting, when installed
        @redactor = token && QueryRedactor.new(token)
        @rejections = RateLimiter.new(limit: REJECTIONS_PER_SECOND, interval: 1.0)
      end

      # Logs one finished request, unless access logging is off (`log_requests false`, `quiet`).
      # The profiler's token, when given as `?token=`, shows as `token=[REDACTED]`.
      # @param env [Hash] the request's Rack env (REMOTE_ADDR, REQUEST_METHOD, SCRIPT_NAME,
      #   PATH_INFO, QUERY_STRING, SERVER_PROTOCOL, HTTP_USER_AGENT, HTTP_REFERER and
      #   heron.request_id are read).
      # @param status [Integer] the response status.
      # @param bytes [Integer, nil] response body bytes sent.
      # @param duration [Float] seconds from request start to the last byte written.
      # @return [void]
      def access(env, status, bytes, duration)
        return unless @access
        env = @redactor.redact(env) if @redactor
        emit(@log_io, :info, @format.access(env, status, bytes, duration, Logger.worker))
      end

      # @param message [String] a server event.
      # @param details [Hash] structured fields for the JSON format.
      # @return [void]
      def info(message, **details)
        event(:info, message, nil, details)
      end

      # @param message [String] something the operator should look at.
      # @param details [Hash] structured fields for the JSON format (the message must say the
      #   same in words, for the common format).
      # @return [void]
      def warn(message, **details)
        event(:warn, message, nil, details)
      end

      # @param message [String] what failed.
      # @param exception [Exception, nil] logged with its class, message, backtrace and causes.
      # @param details [Hash] structured fields for the JSON format.
      # @return [void]
      def error(message, exception = nil, **details)
        event(:error, message, exception, details)
      end

      # Logs a request refused before the app saw it (malformed, too large, too slow), at most
      # {REJECTIONS_PER_SECOND} a second: a flood is counted, and the next line logged says how
      # many were left out.
      # @param status [Integer] the status answered (400, 408, 413, 414, 431, 501, 505).
      # @param reason [String] why, e.g. "invalid header field".
      # @param peer [String, nil] the client's address.
      # @return [Boolean] whether a line was written.
      def rejected(status, reason, peer)
        @rejections.allow do |dropped|
          note = dropped.positive? ? " (#{dropped} more rejected since, not logged)" : ""
          warn("rejected request from #{peer || '-'}: #{status} #{reason}#{note}",
               status: status, reason: reason.to_s, remote_addr: peer, not_logged: dropped)
        end
      end

      # Prints the start-up banner to `config.log_io` (also when quiet: quiet only drops access lines).
      # @param addresses [Array<String, Addrinfo>] bound listeners: bind URIs or Addrinfo objects.
      # @param mode [String] e.g. "single process, 1 reactor thread, up to 4096 connections".
      # @param control [String, nil] the control listener's actual address (after any fallback).
      # @return [void]
      def banner(addresses:, mode:, control: nil)
        info = { version: VERSION, ruby: "#{RUBY_VERSION}-p#{RUBY_PATCHLEVEL}",
                 environment: @config.environment_name, pid: Process.pid, mode: mode,
                 urls: addresses.map { |address| url(address) }, control: control }.compact
        emit(@log_io, :info, @format.banner(info))
      end

      private

      def event(level, message, exception, details)
        emit(@error_io, level, @format.event(level, message, exception, details.empty? ? nil : details, Logger.worker))
      end

      # A buffered IO would flush partial lines, which interleave across worker processes.
      def unbuffered(io)
        io.sync = true if io.respond_to?(:sync=)
        io
      end

      def emit(io, level, text)
        @foreign ? to_foreign(level, text) : write(io, text)
      end

      # A Logger object's failures (a full disk, a broken formatter) never fail a request.
      def to_foreign(level, text)
        @foreign.public_send(level, text.chomp)
      rescue StandardError
        nil
      end

      def write(io, text)
        io.write(text)
      rescue IOError, SystemCallError
        nil
      end

      def url(address)
        return address.sub(%r{\Atcp://}, "http://") if address.is_a?(String)
        return "unix://#{address.unix_path}" if address.unix?
        host = address.ipv6? ? "[#{address.ip_address}]" : address.ip_address
        "http://#{host}:#{address.ip_port}"
      end
    end
  end
end
