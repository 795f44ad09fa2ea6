# frozen_string_literal: true

require "protocol/http2/server"
require "protocol/http2/framer"
require "protocol/http2/stream"
require_relative "../request"
require_relative "../request/rewindable_input"
require_relative "../response/error_response"
require_relative "../response/head"
require_relative "../response/early_hints"
require_relative "../log/request_id"
require_relative "../timeout_error"
require_relative "body_stream"

module Heron
  module HTTP2
    # One request and its response on an HTTP/2 stream, run in a fiber of its own: builds the
    # env, calls the app, writes the headers and the body in DATA frames within the flow-control
    # windows, and reports the request as finished (access log, metrics, after-reply callbacks).
    class Exchange
      BODILESS = [204, 304].freeze
      # Connection-specific fields HTTP/2 forbids (RFC 9113 8.2.2), beyond the `connection`,
      # `transfer-encoding` and `rack.*` names Response::Head.fields already leaves out.
      DROPPED = %w[keep-alive upgrade proxy-connection].freeze

      # @param stream [Stream]
      # @param env [Hash] the request's env (complete but for rack.input and Heron's keys).
      # @param context [Server::Context] app, config, logger and date.
      # @param listener [#admit, #finished] told of the request (the reactor thread).
      def initialize(stream, env, context, listener)
        @stream = stream
        @env = env
        @context = context
        @listener = listener
        @timeout = context.config.write_timeout
      end

      # Runs the app and writes its response; never raises.
      # @param started [Float] monotonic time the request's headers arrived.
      # @return [void]
      def run(started)
        request = Request.new(complete_env(started), @env["rack.input"], true, 1, started)
        offer_early_hints(request) if @context.config.early_hints
        respond(request)
      ensure
        request.input.close_after(request.env) if request&.input.is_a?(Request::RewindableInput)
        @listener.finished(request) if request
      end

      private

      def complete_env(started)
        @env.merge!("rack.input" => input, "rack.hijack?" => false, "rack.after_reply" => [],
                    "rack.response_finished" => [], "heron.request_start" => started)
        Log::RequestId.assign(@env)
        @env
      end

      # The stream's body, made rewindable (kept as it is read) when `rewindable_input` is on.
      def input
        config = @context.config
        return @stream.input unless config.rewindable_input?
        Request::RewindableInput.new(@stream.input, threshold: config.body_spool_threshold)
      end

      # `rack.early_hints`: a HEADERS frame with `:status 103`, before the response's own.
      def offer_early_hints(request)
        sender = ->(headers) { @stream.send_headers(app_fields(headers).unshift([":status", "103"])) }
        @env["rack.early_hints"] = Response::EarlyHints.new(request, sender)
      end

      # A client that stops taking the response (its window stays closed past write_timeout)
      # gets its stream reset, as an HTTP/1.1 one gets its connection closed; a client gone or a
      # stream already reset is nothing to answer.
      def respond(request)
        status, headers, body = @listener.admit(request) || call_app(request)
        write(request, status.to_i, headers, body)
        stop_body(request)
      rescue Response::Invalid => e
        invalid(request, e)
      rescue Heron::TimeoutError => e
        request.error ||= e
        reset(Protocol::HTTP2::CANCEL)
      rescue Protocol::HTTP2::Error, EOFError, IOError, SystemCallError => e
        request.error ||= e
      rescue StandardError => e
        @context.logger.error("response body raised on #{@env['REQUEST_METHOD']} #{@env['PATH_INFO']}", e)
        @context.app_failure.report(request, e)
        request.error ||= e
        reset(Protocol::HTTP2::INTERNAL_ERROR)
      ensure
        body.close if body.respond_to?(:close)
      end

      # A request that failed while its body was still coming (a body timeout's 408) has had
      # its answer: RST_STREAM NO_ERROR asks the client to stop sending (RFC 9113 §8.1). A healthy
      # request answered early keeps its stream for the client to finish: curl 7.88, for one,
      # takes a reset after a complete response for an error and drops the response.
      def stop_body(request)
        reset(Protocol::HTTP2::NO_ERROR) if request.error && @stream.state == :half_closed_local
      end

      def invalid(request, error)
        @context.logger.error("invalid response to #{@env['PATH_INFO']}", error)
        @context.app_failure.report(request, error)
        request.error = error
        return reset(Protocol::HTTP2::INTERNAL_ERROR) if request.status
        write(request, *Response::ErrorResponse.rack(500))
      end

      def call_app(request)
        Log::RequestId.echo(@context.app.call(@env), @env)
      rescue StandardError, ScriptError => e
        @context.app_failure.response(request, e)
      end

      def write(request, status, headers, body)
        bodiless = @env["REQUEST_METHOD"] == "HEAD" || BODILESS.include?(status) || status < 200
        fields = response_fields(status, headers)
        request.status = status # the head is valid: from here on it goes out
        request.headers = headers
        return @stream.send_headers(fields, Protocol::HTTP2::END_STREAM) if bodiless
        @stream.send_headers(fields)
        request.bytes = send_body(body)
        @stream.send_data("", Protocol::HTTP2::END_STREAM)
      end

      # The head's fields: the app's, checked and split by the HTTP/1 writer's rules
      # (Response::Head.fields), lower-cased, less those HTTP/2 forbids.
      def response_fields(status, headers)
        app_fields(headers).unshift([":status", status.to_s], ["date", @context.date.now])
      end

      def app_fields(headers)
        fields = Response::Head.fields(Response::Head.normalize(headers))
        fields.reject! { |name, _| DROPPED.include?(name) }
        fields
      end

      def send_body(body)
        sent = 0
        writer = ->(chunk) { sent += send_chunk(chunk.to_s.b) }
        if body.respond_to?(:each) then body.each(&writer)
        elsif body.respond_to?(:call) then body.call(BodyStream.new(@stream.input, writer))
        end
        sent
      end

      # Sends a chunk as DATA frames as the windows allow.
      def send_chunk(data)
        offset = 0
        while offset < data.bytesize
          size = @stream.sendable(data.bytesize - offset, @timeout)
          @stream.send_data(data.byteslice(offset, size))
          offset += size
        end
        data.bytesize
      end

      def reset(code)
        @stream.send_reset_stream(code) unless @stream.closed?
      rescue Protocol::HTTP2::Error, IOError, SystemCallError, Heron::TimeoutError
        nil
      end
    end
  end
end
