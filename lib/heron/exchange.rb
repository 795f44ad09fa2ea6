# frozen_string_literal: true

require "protocol/http2/error"
require_relative "timeout_error"
require_relative "log/request_id"
require_relative "request/rewindable_input"
require_relative "response/error_response"
require_relative "clock"

module Heron
  # One Rack exchange, written once for HTTP/1.1 and HTTP/2 (as protocol-rack's Adapter is for
  # async-http's protocols): the request is counted in (the listener's `admit`, which may shed
  # it, and the metrics), the app called, an app that raises answered (Response::AppFailure),
  # the request id echoed, the body closed, the input released and the listener told the
  # request is finished (its access log line, metrics and callbacks). A response Heron cannot
  # send, a body that raises while it is sent and a client that goes away are each logged and
  # reported here. The protocol only frames: its framing object writes the response and says
  # what a response cut short becomes on its wire.
  #
  # The framing (Heron::Connection for HTTP/1.1, HTTP2::Framing for a stream) answers:
  # - `write(request, status, headers, body)`: writes the response, setting request.status,
  #   request.headers and request.bytes;
  # - `sent?(request)`: whether any of the response is out, so a 500 can no longer replace it;
  # - `broken(request)`: the response cannot be finished (HTTP/1.1 closes the connection after
  #   what is out, HTTP/2 resets the stream with INTERNAL_ERROR);
  # - `gone(request, error)`: the client went away or stopped reading (error is one of {GONE});
  # - `continue(request)`: the app answered 100; true when the protocol sent `100 Continue` to a
  #   client waiting for it, and the app is to be called again.
  class Exchange
    # Errors that mean the client went away or stopped reading: nothing more can be said to it.
    GONE = [SystemCallError, IOError, Heron::TimeoutError, Protocol::HTTP2::Error].freeze

    # @param context [Server::Context] app, logger, metrics and the app failure policy.
    # @param listener [#admit, #finished, #mailbox] the reactor thread (see Heron::Connection#initialize).
    def initialize(context, listener)
      @app = context.app
      @app_failure = context.app_failure
      @logger = context.logger
      @metrics = context.metrics
      @listener = listener
    end

    # @return [Upgrade::Mailbox] the listener's, where other threads hand writes to the streams
    #   apps upgraded (Upgrade::StreamSession, `rack.upgrade` SSE over HTTP/2).
    def mailbox = @listener.mailbox

    # Answers one request, whose env is complete; never raises what the app or the client
    # caused.
    # @param request [Request]
    # @param framing [#write, #sent?, #broken, #gone, #continue] the protocol's side (see above).
    # @return [Boolean] whether the listener still uses the request (its callbacks are queued),
    #   so the connection must not reuse its object.
    def respond(request, framing)
      begin
        started(request) if @metrics # the queue time is only reported as a metric
        status, headers, body = @listener.admit(request) || call_app(request, framing)
        framing.write(request, status, headers, body)
      rescue Response::Invalid => e
        invalid(request, framing, e)
      rescue *GONE => e
        gone(request, framing, e)
      rescue StandardError, ScriptError => e
        body_error(request, framing, e)
      ensure
        close_body(request, body)
        release_input(request)
        in_use = @listener.finished(request)
      end
      in_use
    end

    private

    def started(request)
      request.app_started_at = Clock.now
      @metrics.request_started
    end

    # The app's response, with the request's x-request-id added unless the app set one
    # (Log::RequestId). If the app answers 100 to a client waiting for it (Unicorn's convention),
    # the protocol sends `100 Continue` and the app is called again, the expectation answered.
    # The app is called one VM entry deeper (Connection::StackScrub.around), so that the
    # connection's fiber, waiting for its next request, keeps none of the response alive: with
    # YJIT always, and without a JIT once any c_call TracePoint has run in the process.
    def call_app(request, framing)
      env = request.env
      response = Connection::StackScrub.around { @app.call(env) }
      response = continued(request, response) if response[0] == 100 && framing.continue(request)
      Log::RequestId.echo(response, env)
    rescue StandardError, ScriptError => e
      request.keepalive = false # what the app left of the body is unknown: HTTP/1.1 closes
      Log::RequestId.echo(@app_failure.response(request, e), env)
    end

    def continued(request, response)
      close_body(request, response[2])
      request.env.delete("HTTP_EXPECT") # answered: the second call sees a plain request
      @app.call(request.env)
    end

    # A response Heron cannot send (Response::Invalid): a 500 instead when none of it is out.
    def invalid(request, framing, error)
      @logger.error("invalid response to #{request.env['PATH_INFO']}", error)
      @app_failure.report(request, error)
      request.error = error
      request.keepalive = false
      framing.sent?(request) ? framing.broken(request) : framing.write(request, *Response::ErrorResponse.rack(500))
    rescue *GONE => e
      gone(request, framing, e)
    end

    # The app's body raised once the head may already be out: nothing more can be said to the
    # client (a chunked HTTP/1.1 body stays unterminated, an HTTP/2 stream is reset).
    def body_error(request, framing, error)
      @logger.error("response body raised on #{request.env['REQUEST_METHOD']} #{request.env['PATH_INFO']}", error)
      @app_failure.report(request, error)
      request.error ||= error
      request.keepalive = false
      framing.broken(request)
    end

    def gone(request, framing, error)
      request.error ||= error
      request.keepalive = false
      framing.gone(request, error)
    end

    def close_body(request, body)
      body.close if body.respond_to?(:close)
    rescue StandardError => e
      request.error ||= e
      @logger.error("body.close raised", e)
    end

    # The body memory a whole read held is given back once the response is written (the app's
    # String is garbage by then). A rewindable input keeps the body it read (memory or a
    # Tempfile): freed once the request and its callbacks are done.
    def release_input(request)
      input = request.input
      input.release
      input.close_after(request.env) if input.is_a?(Request::RewindableInput)
    end
  end
end
