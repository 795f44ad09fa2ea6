# frozen_string_literal: true

require_relative "body_pace"
require_relative "../request"
require_relative "../request/input"
require_relative "../request/rewindable_input"
require_relative "../request/expectation"
require_relative "../response/head"
require_relative "../response/early_hints"
require_relative "../upgrade/handshake"
require_relative "../timeout_error"
require_relative "../clock"

module Heron
  class Connection
    # The HTTP/1.1 side of a connection's requests: reads each head off the socket with the C
    # parser within header_timeout and makes the Request the app is given (its env completed, its
    # `rack.input`, the `100 Continue` it may owe, the pace its body must keep, `rack.hijack` and
    # `rack.early_hints`). Made once per connection, when its client is known to speak HTTP/1.1,
    # it keeps what is reused from one request to the next: the parser, the early hints writer
    # and the finished request's object.
    class RequestReader
      include Clock

      CONTINUE = "HTTP/1.1 100 Continue\r\n\r\n"
      private_constant :CONTINUE

      # @param socket [Connection::BufferedSocket]
      # @param context [Server::Context] the settings, the parser, the GC pacer and body budget.
      # @param env [Request::EnvBuilder] the connection's env builder.
      # @param hijack [Proc] the connection's `rack.hijack` callable (see {#request}).
      def initialize(socket, context, env, hijack)
        @socket = socket
        @context = context
        @config = context.config
        @env = env
        @hijack = hijack
        @expectation = Request::Expectation::NONE
      end

      # @return [Request, nil] the request last read, until {#finish}; after it, its emptied
      #   object kept for the next request, or nil.
      attr_reader :request

      # Reads the head of the next request, whose first byte came at `started`, and makes its
      # Request (the previous one's object, emptied, when the connection kept it).
      # @param started [Float] monotonic time of the request's first byte (or of the accept).
      # @return [Request, nil] nil when the client closed before the head was complete.
      # @raise [Heron::TimeoutError] when the head is not complete within header_timeout.
      # @raise [HTTPParser::Error, Request::Input::TooLarge, Request::Expectation::Failed] for a
      #   request the connection refuses (told to the app failure policy first).
      def read_request(started)
        env = @env.fresh
        deadline = started + @config.header_timeout
        (@parser ||= @context.parsers.take).reset # taken for the first request, and again after parking
        until (length = @socket.parse_head(@parser, env))
          @socket.fill(time_left(deadline)) or return nil
        end
        @socket.skip(length)
        build(env, started)
      rescue HTTPParser::Error, Request::Input::TooLarge, Request::Expectation::Failed => e
        @context.app_failure.rejected(e, env || {}, e.status)
        raise
      end

      # Has the connection's spot wait for the body before the app is called, when it has a
      # length (Server::Parking::Spot#wait_for_body prebuffers or parks it).
      # @param request [Request] the request {#read_request} returned.
      # @param spot [Server::Parking::Spot] the connection's.
      # @return [Symbol, nil] :parked, :gone (the client closed before its body was complete),
      #   or nil: the app may be called.
      def wait_for_body(request, spot)
        (length = @parser.content_length) && spot.wait_for_body(request, length, @expectation, @pace)
      end

      # @return [Request::Expectation] the current request's `Expect: 100-continue` (pending while
      #   the client still waits for a `100 Continue`: a response then closes the connection,
      #   since whether a body follows is unknown); Expectation::NONE between requests. A reader,
      #   not a method of its own: the connection asks it on every response.
      attr_reader :expectation

      # @return [Symbol, nil] what `rack.upgrade?` offers the current request (:websocket or :sse,
      #   see Upgrade::Handshake.kind), nil when nothing: the connection asks it before it looks
      #   for the app's `rack.upgrade` in the env, a lookup of an absent key on most requests.
      attr_reader :upgrade

      # Sends `100 Continue` when the client waits for it.
      # @return [Boolean] whether it did.
      def continue
        return false unless @expectation.pending?
        send_continue(@expectation)
        true
      end

      # The response is written: the request's object is emptied and kept for the next request,
      # unless `in_use` (its callbacks still hold it); its 100-continue and pace are forgotten.
      # @param in_use [Boolean]
      # @return [nil] (nothing is held for the connection's next request but the emptied object)
      def finish(in_use)
        if in_use
          @request = nil
        else
          @request&.clear
        end
        @pace = nil
        @expectation = Request::Expectation::NONE
        nil
      end

      # Gives back the parser (about 1 KiB) of a connection parked between requests
      # (Server::ParserPool#give); the next {#read_request} takes one again.
      # @return [nil]
      def release_parser
        @context.parsers.give(@parser) if @parser
        @parser = nil
      end

      private

      def build(env, started)
        length = body_length
        @expectation = expect = Request::Expectation.for(env, @parser.http_minor, length)
        @pace = body_pace(length)
        input = new_input(length, expect)
        input = Request::RewindableInput.new(input, threshold: @config.body_spool_threshold) if @config.rewindable_input?
        @env.complete(env, input, started)
        env["rack.hijack"] = @hijack
        (@upgrade = Upgrade::Handshake.kind(env)) and env["rack.upgrade?"] = @upgrade
        send_continue(expect) if expect.pending? && @config.continue_mode == :eager
        @request = @request&.reuse(env, input, @parser.keepalive?, @parser.http_minor, started) ||
                   Request.new(env, input, @parser.keepalive?, @parser.http_minor, started)
        offer_early_hints(@request) if @config.early_hints && @request.http11?
        @request
      end

      # `rack.early_hints`: a 103 written at once, between the request and its response (the
      # writer is made once per connection: one object per request, not two).
      def offer_early_hints(request)
        @hint_writer ||= lambda do |headers|
          @socket.write(Response::Head.build(103, Response::Head.normalize(headers), ""), @config.write_timeout)
        end
        request.env["rack.early_hints"] = Response::EarlyHints.new(request, @hint_writer)
      end

      # The request's `rack.input`: for a request without a body, the thread's one empty input
      # (Server::Context#empty_input), which has nothing to read and never changes.
      def new_input(length, expect)
        return @context.empty_input if length&.zero?
        Request::Input.new(@socket, @parser, length, @config, continue_hook(expect), @pace, @context.gc_pacer,
                           @context.body_budget)
      end

      def body_length
        return nil if @parser.chunked?
        length = @parser.content_length || 0
        limit = @config.max_body_size
        raise Request::Input::TooLarge, "request body of #{length} bytes exceeds #{limit}" if limit && length > limit
        length
      end

      # Bodies must keep min_body_rate (see Connection::BodyPace); none is needed for an empty one.
      def body_pace(length)
        return nil if length&.zero? || @config.min_body_rate.zero?
        Connection::BodyPace.new(@config.body_timeout, @config.min_body_rate, @config.body_rate_grace)
      end

      def continue_hook(expect)
        expect.pending? ? ->(_input) { send_continue(expect) } : nil
      end

      def send_continue(expect)
        return unless expect.pending?
        @socket.write(CONTINUE, @config.write_timeout) if !@socket.buffered?
        expect.answered!
      end

      def time_left(deadline)
        left = deadline - now
        raise Heron::TimeoutError, "request head timed out" if left <= 0
        left
      end
    end
  end
end
