# frozen_string_literal: true

require_relative "error_response"

module Heron
  module Response
    # What a request is answered when its app raises, over HTTP/1.1 and HTTP/2 alike: the status
    # the error maps to (Response::ErrorResponse.status_for), the error logged when it is the
    # app's fault (500), and `lowlevel_error_handler` (Puma's name; for error reporters such as
    # Sentry or Honeybadger) told of it with the exception, the env and that status. A Rack
    # response the handler returns is sent instead of Heron's; a handler that raises is logged
    # and changes nothing.
    class AppFailure
      # @param logger [Log::Logger]
      # @param handler [#call, nil] the `lowlevel_error_handler`, called with (error, env, status).
      def initialize(logger, handler)
        @logger = logger
        @handler = handler
      end

      # @param request [Request] the request whose app raised; its `error` is set.
      # @param error [Exception]
      # @return [Array] the Rack response to send.
      def response(request, error)
        request.error = error
        status = ErrorResponse.status_for(error)
        @logger.error("app error on #{describe(request.env)}", error) if status == 500
        handled(error, request.env, status) || ErrorResponse.rack(status)
      end

      # Tells the handler of an error that ended a response after the app returned (a response
      # Heron cannot send, a body that raised while being sent); what it returns is not used:
      # the head may be out.
      # @param request [Request]
      # @param error [Exception]
      # @param status [Integer]
      # @return [void]
      def report(request, error, status = 500)
        handled(error, request.env, status)
        nil
      end

      # Tells the handler of a request refused before the app was called: a head Heron cannot
      # parse or one over a limit (400, 413, 414, 431), or an expectation it cannot meet (417),
      # as Puma tells it of its parse errors. `env` holds what was parsed of the head (possibly
      # little more than the connection's keys). What the handler returns is not used: the
      # client gets Heron's short response and the connection closes.
      # @param error [Exception]
      # @param env [Hash]
      # @param status [Integer]
      # @return [void]
      def rejected(error, env, status)
        handled(error, env, status)
        nil
      end

      private

      def handled(error, env, status)
        return nil unless @handler
        response = @handler.call(*[error, env, status].first(arguments))
        response if rack_response?(response)
      rescue StandardError, ScriptError => e
        @logger.error("lowlevel_error_handler raised while handling #{error.class} on #{describe(env)}; " \
                      "sending Heron's #{status}", e)
        nil
      end

      # As Puma: a handler that takes one or two arguments (a lambda `->(error) { }`) gets that
      # many; a block or a method with optional ones gets all three.
      def arguments
        arity = @handler.respond_to?(:arity) ? @handler.arity : @handler.method(:call).arity
        arity.between?(1, 2) ? arity : 3
      end

      def rack_response?(response)
        response.is_a?(Array) && response.size == 3 && response[0].is_a?(Integer) && response[1].respond_to?(:each)
      end

      def describe(env)
        "#{env['REQUEST_METHOD']} #{env['PATH_INFO']}"
      end
    end
  end
end
