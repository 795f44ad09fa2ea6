# frozen_string_literal: true

require "rails/railtie"
require "active_support/tagged_logging"
require "active_support/isolated_execution_state"
require_relative "../log/json_format"
require_relative "../log/logger"
require_relative "../serving"
require_relative "log_request_id"

module Heron
  class Railtie < ::Rails::Railtie
    # Under Heron: the request id reaches Rails' log lines, and with `log_format :json` those
    # lines are JSON (JSONLog), once Heron's configuration is known (after the app is built
    # under `rails server`).
    initializer "heron.log_request_id" do |app|
      app.config.middleware.insert_before(0, LogRequestId) if Serving.active?
    end

    config.after_initialize do
      next unless Serving.active?
      Serving.on_config { |config| JSONLog.install(::Rails.logger) if config.log_format == :json }
    end

    # Rails' log lines in Heron's JSON format, when Heron serves the app with `log_format :json`:
    # `Rails.logger` (and every logger it broadcasts to: log/production.log, stdout under
    # `rails server` in development) gets this formatter, so each line is one JSON object with
    # the keys Heron's own events have (`time`, `level`, `pid`, `worker` in cluster mode,
    # `message`), plus `source: "rails"`, the request's `request_id` (the one in Heron's access
    # line and the response's `x-request-id`; set by {LogRequestId}) and the logger's `tags`
    # when it has any. Terminal colours (ActiveRecord's SQL lines) are left out. See docs/rails.md.
    class JSONLog
      include ::ActiveSupport::TaggedLogging::Formatter

      COLOURS = /\e\[[\d;]*m/

      # Gives a logger (and what it broadcasts to) this formatter. A logger without formatters
      # (semantic_logger and the like, which format for themselves) is left as it is.
      # @param logger [Logger, ActiveSupport::BroadcastLogger, nil]
      # @return [JSONLog, nil] the formatter.
      def self.install(logger)
        logger.formatter = new if logger.respond_to?(:formatter=)
      end

      def initialize
        @format = Log::JSONFormat.new
      end

      # @param severity [String] "DEBUG", "INFO", "WARN", "ERROR", "FATAL" or "ANY".
      # @param _time [Time] (the line's time is Heron's clock, as its other lines')
      # @param progname [String, nil]
      # @param message [Object] what was logged.
      # @return [String] one JSON line.
      def call(severity, _time, progname, message)
        details = { source: "rails", request_id: ActiveSupport::IsolatedExecutionState[LogRequestId::KEY] }
        tags = current_tags
        details[:tags] = tags unless tags.empty?
        details[:progname] = progname if progname
        @format.event(severity.downcase.to_sym, text(message), nil, details, Log::Logger.worker)
      end

      private

      def text(message)
        string = message.is_a?(String) ? message : message.inspect
        string.gsub(COLOURS, "").sub(/\s+\z/, "")
      end
    end
  end
end
