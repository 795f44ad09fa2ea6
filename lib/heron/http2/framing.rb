# frozen_string_literal: true

require "protocol/http2/server"
require "protocol/http2/framer"
require "protocol/http2/stream"
require_relative "../response/head"
require_relative "../response/early_hints"
require_relative "../timeout_error"
require_relative "body_stream"
require_relative "../upgrade/handshake"
require_relative "../upgrade/stream_session"

module Heron
  module HTTP2
    # One request on an HTTP/2 stream, run in a fiber of its own: frames the response
    # Heron::Exchange (the same Rack exchange as HTTP/1.1's) answers: the headers
    # in a HEADERS frame, the body in DATA frames within the flow-control windows, and a
    # response cut short as a reset stream.
    class Framing
      BODILESS = [204, 304].freeze
      # The :status field of each status code (frozen: the HPACK encoder only reads them).
      STATUS = (100..999).to_h { |status| [status, [":status", status.to_s].freeze] }.freeze
      EMPTY = "".b.freeze
      # Connection-specific fields HTTP/2 forbids (RFC 9113 8.2.2), beyond the `connection`,
      # `transfer-encoding` and `rack.*` names Response::Head.fields already leaves out.
      DROPPED = %w[keep-alive upgrade proxy-connection].freeze

      # @param context [Server::Context] config and date.
      # @param exchange [Heron::Exchange] the connection's Rack exchange.
      def initialize(context, exchange)
        @context = context
        @exchange = exchange
        @timeout = context.config.write_timeout
        @stream = @env = nil
      end

      # Runs the exchange of one stream's request; never raises what the app or the client
      # caused. A stream task's requests, one after another, share its Framing (as an HTTP/1.1
      # connection frames its own), which keeps nothing of them once each is answered.
      # @param stream [Stream]
      # @param request [Request] the stream's request, its env complete (Request::EnvBuilder#complete).
      # @return [void]
      def run(stream, request)
        @stream = stream
        @env = request.env
        offer_early_hints(request) if @context.config.early_hints
        @exchange.respond(request, self)
      ensure
        @stream = @env = nil
      end

      # Writes the response. A request that failed while its body was still coming (a body
      # timeout's 408) has had its answer: RST_STREAM NO_ERROR asks the client to stop sending
      # (RFC 9113 §8.1). A healthy request answered early keeps its stream for the client to
      # finish, up to discard_body_limit more bytes (Stream#discard_rest): curl 7.88, for one,
      # takes a reset after a complete response for an error.
      # @return [void]
      def write(request, status, headers, body)
        return event_stream(request, headers) if @env["rack.upgrade"] && @env["rack.upgrade?"] == :sse && status.to_i < 300
        send_response(request, status.to_i, headers, body)
        return unless @stream.state == :half_closed_local
        request.error ? reset(Protocol::HTTP2::NO_ERROR) : @stream.discard_rest(@context.config.discard_body_limit)
      end

      # @return [Boolean] whether the response's HEADERS are out (request.status is set once they
      #   are valid).
      def sent?(request) = !request.status.nil?

      # The response cannot be finished: the stream is reset.
      # @return [void]
      def broken(_request) = reset(Protocol::HTTP2::INTERNAL_ERROR)

      # A client that stops taking the response (its window stays closed past write_timeout)
      # gets its stream reset, as an HTTP/1.1 one gets its connection closed; a client gone or a
      # stream already reset is nothing to answer.
      # @return [void]
      def gone(_request, error)
        reset(Protocol::HTTP2::CANCEL) if error.is_a?(Heron::TimeoutError)
      end

      # An app's 100 is sent as it is: HTTP/2 has no `Expect: 100-continue` wait to answer here.
      # @return [false]
      def continue(_request) = false

      private

      # `rack.early_hints`: a HEADERS frame with `:status 103`, before the response's own.
      def offer_early_hints(request)
        stream = @stream # the hints' own stream, whenever they are sent
        sender = ->(headers) { stream.send_headers(app_fields(headers).unshift([":status", "103"])) }
        @env["rack.early_hints"] = Response::EarlyHints.new(request, sender)
      end

      # The head, then the body: a body of Strings that fits the windows and one frame leaves
      # with the head in one write that ends the stream (Stream#send_response), any other in DATA
      # frames as the windows allow.
      def send_response(request, status, headers, body)
        bodiless = @env["REQUEST_METHOD"] == "HEAD" || BODILESS.include?(status) || status < 200
        fields = response_fields(status, headers)
        request.status = status # the head is valid: from here on it goes out
        request.headers = headers
        return @stream.send_response(fields, EMPTY) if bodiless
        if (data = body.is_a?(Array) && body.size == 1 && body[0].is_a?(String) ? body[0] : whole(body))
          return request.bytes = data.bytesize if @stream.send_response(fields, data)
          body = [data] # the windows are short of it: it goes as they allow
        else
          @stream.send_headers(fields)
        end
        request.bytes = send_body(body)
        @stream.send_data("", Protocol::HTTP2::END_STREAM)
      end

      # A body of Strings (an Array, its only String taken by the caller) as one String, its
      # Strings joined, when they fit in one DATA frame now.
      # @return [String, nil]
      def whole(body)
        return unless body.is_a?(Array)
        body.join if body.all?(String) && body.sum(&:bytesize) <= @stream.available_frame_size
      end

      # The head's fields: the app's, checked and split by the HTTP/1 writer's rules
      # (Response::Head.fields), lower-cased, less those HTTP/2 forbids.
      def response_fields(status, headers)
        app_fields(headers).unshift(STATUS[status] || [":status", status.to_s], @context.date.field)
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

      # `rack.upgrade` SSE: a `text/event-stream` head, then the handler's events until the app
      # or the client ends the stream (Upgrade::StreamSession), in this stream's fiber.
      def event_stream(request, headers)
        headers = Response::Head.normalize(headers).reject { |name, _| name.start_with?("rack.") || name == "content-length" }
        headers["content-type"] ||= "text/event-stream"
        headers["cache-control"] ||= "no-cache"
        request.status = 200
        request.headers = headers
        @stream.send_headers(response_fields(200, headers))
        sent = 0
        session = Upgrade::StreamSession.new(@stream, ->(chunk) { sent += send_chunk(chunk) }, @env["rack.upgrade"],
                                             Upgrade::Handshake.lasting_env(@env), @context, @exchange.mailbox)
        @stream.watcher = session
        session.run
        request.bytes = sent
        @stream.send_data("", Protocol::HTTP2::END_STREAM) unless @stream.closed?
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
