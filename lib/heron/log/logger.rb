# frozen_string_literal: true

require_relative "../version"
require_relative "common_format"
require_relative "json_format"
require_relative "query_redactor"

module Heron
  module Log
    # What the server writes: an access line per request to `config.log_io`, and events (info,
    # warnings, errors with backtraces) to `config.error_io`, in the format `config.log_format`
    # names. Each entry is written with a single IO#write, so lines from different threads and
    # fibers never interleave. A failing log IO (closed, broken pipe) never fails a request.
    class Logger
      FORMATS = { common: CommonFormat, json: JSONFormat }.freeze

      # @param config [Heron::Configuration] reads log_io, error_io, quiet, log_format, environment.
      def initialize(config)
        @config = config
        @log_io = unbuffered(config.log_io)
        @error_io = unbuffered(config.error_io)
        @quiet = config.quiet
        @format = FORMATS.fetch(config.log_format).new
        @redactor = config.profile_token && QueryRedactor.new(config.profile_token)
      end

      # Logs one finished request, unless the configuration is quiet. The profiler's token, when
      # given as `?token=`, shows as `token=[REDACTED]`.
      # @param env [Hash] the request's Rack env (REMOTE_ADDR, REQUEST_METHOD, SCRIPT_NAME,
      #   PATH_INFO, QUERY_STRING, SERVER_PROTOCOL are read).
      # @param status [Integer] the response status.
      # @param bytes [Integer, nil] response body bytes sent.
      # @param duration [Float] seconds from request start to the last byte written.
      # @return [void]
      def access(env, status, bytes, duration)
        return if @quiet
        env = @redactor.redact(env) if @redactor
        write(@log_io, @format.access(env, status, bytes, duration))
      end

      # @param message [String] a server event.
      # @return [void]
      def info(message)
        write(@error_io, @format.event(:info, message))
      end

      # @param message [String] something the operator should look at.
      # @return [void]
      def warn(message)
        write(@error_io, @format.event(:warn, message))
      end

      # @param message [String] what failed.
      # @param exception [Exception, nil] logged with its class, message, backtrace and causes.
      # @return [void]
      def error(message, exception = nil)
        write(@error_io, @format.event(:error, message, exception))
      end

      # Prints the start-up banner to `config.log_io` (also when quiet: quiet only drops access lines).
      # @param addresses [Array<String, Addrinfo>] bound listeners: bind URIs or Addrinfo objects.
      # @param mode [String] e.g. "single process, 1 reactor thread, up to 4096 connections".
      # @return [void]
      def banner(addresses:, mode:)
        info = { version: VERSION, ruby: "#{RUBY_VERSION}-p#{RUBY_PATCHLEVEL}",
                 environment: @config.environment_name, pid: Process.pid, mode: mode,
                 urls: addresses.map { |address| url(address) } }
        write(@log_io, @format.banner(info))
      end

      private

      # A buffered IO would flush partial lines, which interleave across worker processes.
      def unbuffered(io)
        io.sync = true if io.respond_to?(:sync=)
        io
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
