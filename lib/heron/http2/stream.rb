# frozen_string_literal: true

require "protocol/http2/server"
require "protocol/http2/framer"
require "protocol/http2/stream"
require "protocol/http2/version"
require "async/notification"
require_relative "input"
require_relative "../timeout_error"

module Heron
  module HTTP2
    # One HTTP/2 stream: collects the request's headers and body from the connection's reading
    # fiber, and lets the {Framing} of the exchange running the app write the response within
    # the flow-control windows.
    class Stream < Protocol::HTTP2::Stream
      # protocol-http2's methods that read a stream's @remote_window (besides its initialize and
      # reader): each is overridden here to make the window first (#remote_window).
      SEND_WINDOW_READERS = %i[available_size consume_remote_window receive_window_update].freeze
      # Whether the send window waits for its first use: only on the protocol-http2 release whose
      # source test/heron/http2/stream_window_test.rb checks reads it nowhere else; on any other
      # the window is made with the stream, as protocol-http2 does.
      LAZY_SEND_WINDOW = Protocol::HTTP2::VERSION.start_with?("0.22.")

      # @return [Hash, Array<Array(String, String)>, Exception, nil] the request's head, once
      #   received: its env read straight from the block (Session#read_request), its decoded
      #   fields (a HEADERS frame read the generic way), or the stream error its fields gave
      #   (EnvBuilder#env makes the env of any of them).
      attr_reader :request_headers
      # @return [Input, Request::Input, nil] the request body, once the request head came: an
      #   {Input} the stream feeds from DATA frames, or (a request whose HEADERS ended the stream)
      #   the reactor thread's shared empty one (StreamSettings#empty_input: no Input, Method and Array
      #   per bodiless request).
      def input = @body || (@settings.empty_input if @request_headers)

      # @param connection [Session]
      # @param id [Integer]
      # @param settings [StreamSettings] the callback for a complete request head (given the
      #   stream) and the request's limits.
      # @return [Stream] the new stream, in the connection's table.
      def self.create(connection, id, settings)
        connection.streams[id] = new(connection, id, settings)
      end

      # protocol-http2's Stream#initialize, less the windows: the receive window is made on the
      # first DATA frame (#local_window): most requests have no body; the send window when
      # anything but a whole response is sent or the client touches it (#remote_window): a
      # response that fits at once leaves with its bytes counted (#send_response).
      # @param connection [Session]
      # @param id [Integer]
      # @param settings [StreamSettings]
      def initialize(connection, id, settings) # rubocop:disable Lint/MissingSuper -- its windows are set here
        @connection = connection
        @id = id
        @state = :idle
        @priority = nil
        @local_window = nil
        @body = nil # the Input fed from DATA frames (none when the HEADERS ended the stream)
        @remote_window = (Protocol::HTTP2::Window.new(connection.remote_settings.initial_window_size) unless LAZY_SEND_WINDOW)
        @sent = 0 # DATA bytes sent before the send window was made
        @settings = settings
      end

      # The window of what the stream may still send: the client's SETTINGS_INITIAL_WINDOW_SIZE
      # in force when it is made (as a window made with the stream and moved by every change of
      # it since, RFC 9113 §6.9.2), less what was sent before. protocol-http2 reads it here
      # (SETTINGS) and as @remote_window in {SEND_WINDOW_READERS}, which make it first.
      # @return [Protocol::HTTP2::Window]
      def remote_window
        @remote_window ||= Protocol::HTTP2::Window.new(@connection.remote_settings.initial_window_size).tap { |window| window.consume(@sent) }
      end

      # @return [Integer] what the send window allows now.
      def available_size = remote_window.available

      # Takes a DATA frame's bytes from the send windows (protocol-http2's send_data).
      def consume_remote_window(frame)
        remote_window
        super
      end

      # @return [Protocol::HTTP2::Window] the window of what the client may send on the stream.
      def local_window
        @local_window ||= Protocol::HTTP2::Window.new(@connection.local_settings.initial_window_size)
      end

      # The first HEADERS frame is the request; a later one (trailers) is ignored. (A decoded
      # header list past the limit ends the connection, Session#decode_headers: a few bytes can
      # decode into a great many.) A request without a body has its input ended before the app
      # runs (so a response that closes the stream does not end it with an error made for nothing).
      def process_headers(frame)
        take(super, frame.end_stream?)
      end

      # The request of a new stream from a plain HEADERS frame (Session#read_request), without
      # the frame: the state it leaves (RFC 9113 §5.1: open, or half-closed (remote) with
      # END_STREAM), then as #process_headers.
      # @param head [Hash, Exception] the request's env, or its stream error (EnvBuilder#decode).
      # @param end_stream [Boolean] whether the frame had END_STREAM.
      # @return [void]
      def receive_request(head, end_stream)
        @state = end_stream ? :half_closed_remote : :open
        take(head, end_stream)
      end

      # Headers arriving after the stream closed are still decoded (HPACK state is per connection).
      protected def ignore_headers(frame) = process_headers(frame)

      # Ends the body when the request's last frame came.
      def receive_headers(frame)
        super
        @body&.finish if frame.end_stream?
      end

      # Passes a DATA frame's bytes to the input.
      def process_data(frame)
        data = super
        @body.push(data)
        @body.finish if frame.end_stream?
        data
      rescue Request::Input::TooLarge => e
        @body.finish(e)
        send_reset_stream(Protocol::HTTP2::CANCEL)
        data
      end

      # The response is complete but the client is still sending the body (the app answered
      # without reading it all): the rest is dropped as it comes, its window given back, so the
      # client can finish its upload and end the stream; past `limit` bytes dropped the stream
      # is reset with NO_ERROR (RFC 9113 §8.1: stop sending). Left waiting, a client blocked on
      # a closed window held the stream until keepalive_timeout; reset at once, curl 7.88 takes
      # the reset for an error and reports a failure for a response it had whole.
      # @param limit [Integer] bytes to drop at most (discard_body_limit).
      # @return [void]
      def discard_rest(limit)
        @discard_left = limit
        @body.discard
      end

      # The window is given back as the app reads ({Input}), not when frames arrive.
      def request_window_update = nil

      # Takes a DATA frame's bytes from the receive window (made on the first).
      def consume_local_window(frame)
        local_window.consume(frame.length)
      end

      # Gives bytes back to the client's window (made, if no DATA frame made it yet, first).
      def send_window_update(window_increment)
        local_window
        super
      end

      # The most bytes one DATA frame may carry now: the stream's window, within the
      # connection's (Session#available_frame_size).
      # @return [Integer]
      def available_frame_size
        size = @connection.available_frame_size
        available = remote_window.available
        available < size ? available : size
      end

      # A WINDOW_UPDATE of the stream's own wakes its writer (protocol-http2 calls #window_updated
      # only for the connection's: a client with a small stream window stalled a response).
      def receive_window_update(frame)
        remote_window
        super
        @writable&.signal
      end

      # Wakes a writer waiting for window (connection or stream).
      def window_updated(_size)
        @writable&.signal
        true
      end

      # @return [#stream_closed, nil] told when the stream ends (a `rack.upgrade` SSE stream).
      attr_accessor :watcher

      # The stream ended (sent, received or reset): the app's reads and writes stop waiting.
      def closed(error)
        @writable&.signal
        @watcher&.stream_closed
        return unless @body
        @body.finish(error || (EOFError.new("stream closed") unless @body.finished?))
      end

      # Sends HEADERS (and CONTINUATION) frames (Session#pack_response).
      # @param fields [Array<Array(String, String)>]
      # @param flags [Integer] END_STREAM or 0.
      # @raise [Protocol::HTTP2::ProtocolError] when the stream can no longer send (reset).
      def send_headers(fields, flags = 0)
        @connection.write_frames { write_headers(fields, flags) }
        sent_end_stream if flags.anybits?(Protocol::HTTP2::END_STREAM)
      end

      # Sends a response's HEADERS and, when it fits the windows now, its whole body in one DATA
      # frame that ends the stream, in one write (Session#pack_response: HTTP/2 framing's cost
      # per request).
      # @param fields [Array<Array(String, String)>]
      # @param body [String] empty: the HEADERS frame ends the stream.
      # @return [Boolean] whether the body went too (false: it did not fit the windows, and the
      #   stream stays open for the caller to send it).
      # @raise [Protocol::HTTP2::ProtocolError] when the stream can no longer send (reset).
      def send_response(fields, body)
        @connection.batch do
          raise Protocol::HTTP2::ProtocolError, "Cannot send headers in state: #{@state}" unless @state == :open || @state == :half_closed_remote
          room = @remote_window ? @remote_window.available : @connection.remote_settings.initial_window_size - @sent
          @connection.pack_response(@id, fields, body, room) && sent(body.bytesize)
        end
      end

      # Waits until some of `bytes` may be sent, within `timeout`.
      # @return [Integer] how many may be sent now (at least 1).
      # @raise [Heron::TimeoutError, EOFError]
      def sendable(bytes, timeout)
        while (size = available_frame_size) <= 0
          raise EOFError, "stream closed" if closed?
          @writable ||= Async::Notification.new # made on the first wait: most responses fit the window
          Async::Task.current.with_timeout(timeout) { @writable.wait }
        end
        [size, bytes].min
      rescue Async::TimeoutError
        raise Heron::TimeoutError, "flow-control window stayed closed"
      end

      private

      # Encodes and packs a header block; under the write lock (HPACK's order is the frames').
      def write_headers(fields, flags)
        raise Protocol::HTTP2::ProtocolError, "Cannot send headers in state: #{@state}" unless @state == :open || @state == :half_closed_remote
        @connection.pack_headers(@id, fields, flags)
      end

      # A whole response's DATA bytes off the send window (counted until it is made), and
      # END_STREAM sent.
      # @return [true]
      def sent(bytes)
        @remote_window ? @remote_window.consume(bytes) : @sent += bytes
        sent_end_stream
      end

      # The stream's state once END_STREAM went out (as protocol-http2's send_data).
      # @return [true]
      def sent_end_stream
        @state == :open ? @state = :half_closed_local : close!
        true
      end

      def take(headers, end_stream)
        return headers if @request_headers
        @request_headers = headers
        @body = new_body unless end_stream
        @settings.on_request.call(self)
        headers
      end

      def new_body
        Input.new(limit: @settings.body_limit, timeout: @settings.body_timeout, consumed: method(:consumed),
                  budget: @settings.body_budget)
      end

      def consumed(bytes)
        return if closed? || bytes.zero?
        return send_window_update(bytes) unless @discard_left
        @discard_left -= bytes
        @discard_left.negative? ? send_reset_stream(Protocol::HTTP2::NO_ERROR) : send_window_update(bytes)
      end
    end
  end
end
