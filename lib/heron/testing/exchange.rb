# frozen_string_literal: true

require_relative "../clock"

module Heron
  module Testing
    # The client side of one request: writes the head and body (honouring Expect: 100-continue
    # like curl) and reads everything the server sends until it closes.
    class Exchange
      include Clock

      CONTINUE = /\AHTTP\/1\.1 100 [^\r]*\r\n\r\n/

      # @return [String] every byte the server sent.
      attr_reader :raw
      # @return [Float, nil] seconds from the head being sent to `100 Continue` arriving.
      attr_reader :continue_after
      # @return [Boolean] whether the body was sent.
      attr_reader :body_sent

      # @param method [String]
      # @param path [String]
      # @param headers [Hash]
      # @param body [String, nil]
      # @param wait [Numeric, nil] seconds to wait for 100 Continue; nil sends the body at once.
      def initialize(method, path, headers, body, wait)
        @method = method
        @path = path
        @headers = headers
        @body = body
        @wait = wait
        @raw = +"".b
        @body_sent = false
      end

      # Sends the request and reads the response on `socket`.
      # @param task [Async::Task]
      # @param socket [UNIXSocket]
      # @return [void]
      def run(task, socket)
        @socket = socket
        @socket.write(head)
        @sent_at = now
        writer = @wait ? nil : task.async { send_body }
        await_continue if @wait
        read_to_end
        writer&.wait
      end

      private

      def head
        lines = ["#{@method} #{@path} HTTP/1.1", "host: localhost", "connection: close"]
        @headers.each { |name, value| lines << "#{name}: #{value}" }
        lines << "content-length: #{@body.bytesize}" if @body && !@headers.keys.any? { |k| k.casecmp?("content-length") }
        "#{lines.join("\r\n")}\r\n\r\n"
      end

      def await_continue
        if @socket.wait_readable(@wait)
          read_some
          return unless @raw.match?(CONTINUE)
          @continue_after = now - @sent_at
        end
        send_body
      end

      def send_body
        return unless @body
        @body_sent = true
        @socket.write(@body)
      rescue Errno::EPIPE, Errno::ECONNRESET
        nil
      end

      def read_to_end
        nil while read_some
      end

      def read_some
        @raw << @socket.readpartial(65_536)
      rescue EOFError, Errno::ECONNRESET
        nil
      end
    end
  end
end
