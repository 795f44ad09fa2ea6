# frozen_string_literal: true

require "async/notification"
require "protocol/http2/stream"
require_relative "../response"
require_relative "../protocol_error"

module Heron
  module Attack
    module HTTP2
      # One request on an HTTP/2 connection: sends the headers (and the body, within the flow
      # control windows), counts the response's body bytes, and wakes the fiber waiting in
      # {#response} once the response has ended or the stream has failed.
      class Stream < Protocol::HTTP2::Stream
        # @param connection [Protocol::HTTP2::Client] @param id [Integer]
        def initialize(connection, id)
          super
          @bytes = 0
          # A Notification wakes the waiting fiber on the reactor's next turn, once the frame that
          # ended the stream has been handled (a Condition would run it in the middle).
          @finished = Async::Notification.new
        end

        # Sends the request: END_STREAM on the headers when there is no body.
        # @param headers [Array<Array(String, String)>] pseudo-headers first.
        # @param body [String, nil]
        # @return [void]
        def send_request(headers, body)
          return send_headers(headers, Protocol::HTTP2::END_STREAM) if body.nil? || body.empty?
          send_headers(headers)
          send_body(body)
        end

        # Waits for the end of the response.
        # @return [Response]
        # @raise [Protocol::HTTP2::Error, EOFError] when the stream was reset or the connection lost.
        # @raise [ProtocolError] when the response ended without a status.
        def response
          @finished.wait until @done || @complete
          raise @error if @error && !@complete
          raise ProtocolError, "HTTP/2 response without a :status" unless @status
          cancel # the server answered before the whole body was sent: the rest is not wanted
          Response.new(@status, @bytes, true)
        end

        # Resets the stream (CANCEL) if it is still open, e.g. after a timeout.
        # @return [void]
        def cancel
          send_reset_stream(Protocol::HTTP2::CANCEL) unless closed? || @state == :idle
        rescue Protocol::HTTP2::Error, IOError, SystemCallError
          nil
        end

        # @api private
        # Takes the final status from the response headers (1xx heads are skipped).
        def process_headers(frame)
          headers = super
          status = headers.find { |name, _| name == ":status" }&.last.to_i
          @status ||= status if status >= 200
          ended(frame)
          headers
        end

        # @api private
        # Counts the body bytes; the data itself is dropped.
        def process_data(frame)
          data = super
          @bytes += data.bytesize if data
          ended(frame)
          data
        end

        # @api private
        # Wakes the body sender when the connection's window opens.
        def window_updated(size)
          @finished.signal unless @done
          super
        end

        # @api private
        # Wakes the body sender when the stream's window opens.
        def receive_window_update(frame)
          super
          @finished.signal unless @done
        end

        # @api private
        # The stream ended: normally (error nil), by a reset, or with the connection.
        def closed(error = nil)
          @error = error
          @done = true
          @finished.signal
        end

        private

        # The response is complete once a frame ends the server's side (a RST_STREAM that may
        # follow, NO_ERROR, only stops the rest of the request body).
        def ended(frame)
          return unless frame.end_stream?
          @complete = true
          @finished.signal
        end

        # Sends the body in frames the windows allow, waiting for window updates; stops early
        # when the stream ends first (a server may answer, e.g. 413, before the body is in).
        def send_body(body)
          offset = 0
          while offset < body.bytesize && !@done && !@complete
            size = available_frame_size
            next @finished.wait unless size.positive?
            chunk = body.byteslice(offset, size)
            offset += chunk.bytesize
            send_data(chunk, offset == body.bytesize ? Protocol::HTTP2::END_STREAM : 0)
          end
        end
      end
    end
  end
end
