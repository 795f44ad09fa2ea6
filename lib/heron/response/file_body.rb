# frozen_string_literal: true

require_relative "../timeout_error"

module Heron
  module Response
    # A body that names its file (`to_path`: Rack::Files, Rails' send_file), sent with
    # IO.copy_stream (sendfile(2) on Linux) so its bytes never pass through Ruby strings. A 206
    # whose `content-range` names one range is sent from that range; any other 206 (several
    # ranges, multipart) is left to the body's own `each`. Rack::Files answers one range with a
    # body that has no `to_path` (a server unaware of ranges would send the whole file); its
    # `path` is sent from the range the same way.
    class FileBody
      SLICE = 4 * 1024 * 1024
      RANGE = /\Abytes (\d+)-(\d+)\/(?:\d+|\*)\z/
      private_constant :SLICE, :RANGE

      # @param body [Object] the app's body.
      # @param headers [Hash] lower-case names.
      # @param status [Integer]
      # @return [Boolean] whether the body can be sent from its file.
      def self.sendable?(body, headers, status)
        path = path_of(body, status)
        return false unless path
        return false if status == 206 && !RANGE.match?(headers["content-range"].to_s)
        File.file?(path)
      end

      # @param body [Object] the app's body.
      # @param status [Integer]
      # @return [String, nil] the file the body names: its `to_path`, or for a 206 the `path` of
      #   Rack::Files' body for one range.
      def self.path_of(body, status)
        return body.to_path if body.respond_to?(:to_path) && !body.respond_to?(:to_ary)
        body.path if status == 206 && defined?(::Rack::Files::BaseIterator) && body.is_a?(::Rack::Files::BaseIterator)
      end

      # @param body [#to_path, Rack::Files::BaseIterator]
      # @param headers [Hash] lower-case names.
      # @param status [Integer]
      def initialize(body, headers, status)
        @path = FileBody.path_of(body, status)
        range = status == 206 && RANGE.match(headers["content-range"].to_s)
        @offset = range ? range[1].to_i : 0
        @length = declared(headers) || (range ? range[2].to_i - @offset + 1 : File.size(@path) - @offset)
      end

      # @return [Integer] bytes the response body has.
      attr_reader :length

      # Copies the bytes to the socket, in slices that must each be taken within `timeout`.
      # @param io [IO] the client socket.
      # @param timeout [Numeric] seconds a slice may take.
      # @return [Integer] bytes sent.
      # @raise [EOFError] when the file is shorter than the length announced.
      # @raise [Heron::TimeoutError] when the client stops reading.
      def copy_to(io, timeout)
        File.open(@path, "rb") { |file| copy(file, io, timeout) }
      end

      private

      def declared(headers)
        value = headers["content-length"]
        value && Integer(value.to_s, 10)
      end

      def copy(file, io, timeout)
        sent = 0
        while sent < @length
          count = slice(file, io, [@length - sent, SLICE].min, @offset + sent, timeout)
          raise EOFError, "#{@path} ended after #{sent} of #{@length} bytes" if count.zero?
          sent += count
        end
        sent
      end

      def slice(file, io, length, offset, timeout)
        Async::Task.current.with_timeout(timeout, Heron::TimeoutError, "write timed out") do
          IO.copy_stream(file, io, length, offset)
        end
      end
    end
  end
end
