# frozen_string_literal: true

require_relative "head"
require_relative "http_date"
require_relative "stream"
require_relative "raw_input"
require_relative "file_body"
require_relative "bytes"

module Heron
  module Response
    # Writes a Rack response to the socket: picks the framing (Content-Length, chunked or
    # close-delimited), adds Date and Connection, skips the body for HEAD/1xx/204/304 whatever
    # kind it is, hands the raw socket to upgrades (101) and partial hijackers, and sends
    # `to_path` bodies from the file without copying them through Ruby.
    class Writer
      COALESCE = 64 * 1024
      private_constant :COALESCE

      # @return [String] a buffer for {#initialize}'s `head`: binary, with room for a typical head.
      def self.head_buffer
        String.new(capacity: 512, encoding: Encoding::BINARY)
      end

      # @param socket [Connection::BufferedSocket]
      # @param context [Server::Context] the reactor thread's: its config, its Date cache
      #   (Response::HTTPDate) and its head buffer (see {.head_buffer}), where each head is built,
      #   shared by the thread's connections: a head (with a small body appended) is handed to the
      #   socket at once, and BufferedSocket#write copies what it must wait to write, so the next
      #   connection's head cannot overwrite it. One String and one malloc less a response. A
      #   writer holds the context rather than what it reads of it, so that its three instance
      #   variables stay in its own object slot on Ruby 3.1 (bench/results/per_core.md, "Fewer
      #   cold lines a request").
      def initialize(socket, context)
        @socket = socket
        @context = context
        @timeout = context.config.write_timeout
      end

      # Writes the whole response; sets request.status, request.bytes and request.keepalive.
      # Header names of any case are accepted and written lower-cased (see Head.normalize).
      # @param request [Request]
      # @param status [Integer]
      # @param headers [Hash]
      # @param body [#each, #call, #to_path]
      # @return [Symbol] :done, or :hijacked when the app took the socket.
      def write(request, status, headers, body)
        headers = Head.normalize(headers)
        request.status = status
        request.headers = headers
        request.keepalive = false if headers["connection"] == "close"
        return hijack(request, headers) if headers["rack.hijack"]
        return array(request, headers, body) if body.instance_of?(Array) # most bodies: neither a stream nor a file
        return upgrade(request, headers, body) if upgrade?(status, headers, body)
        return bodiless(request, headers, body) if bodiless?(request, status)
        return stream(request, headers, body) if callable?(body)
        return file(request, headers, body) if FileBody.sendable?(body, headers, status)
        enumerable(request, headers, body)
        :done
      end

      private

      def callable?(body) = !body.respond_to?(:each) && body.respond_to?(:call)

      # A 101, or a 2xx naming an `upgrade` with a streaming body (the older convention some
      # adapters use), switches protocols: after the head the stream owns the raw socket.
      def upgrade?(status, headers, body)
        callable?(body) && (status == 101 || (headers["upgrade"] && status.between?(200, 299)))
      end

      # HEAD, 1xx, 204 and 304 never carry body bytes. The body is not iterated and a streaming
      # body is not called (as Rack::Head does); the connection closes it like any other.
      def bodiless?(request, status)
        request.head? || status < 200 || status == 204 || status == 304
      end

      # A 101 without a stream or a hijack to hand the socket to switches to nothing Heron could
      # speak, so the connection ends after the head.
      def bodiless(request, headers, body)
        request.keepalive = false if request.status == 101
        send_head(request, headers, head_length(request, headers, body))
        :done
      end

      # A HEAD response carries the length a GET would have, when it is known without iterating.
      def head_length(request, headers, body)
        return "" unless request.head? && !headers["content-length"]
        length = known_length(request, headers, body)
        length ? Head.content_length(length) : ""
      end

      def known_length(request, headers, body)
        return Head.bytesize_of(body.to_ary) if body.respond_to?(:to_ary)
        FileBody.new(body, headers, request.status).length if FileBody.sendable?(body, headers, request.status)
      end

      # An Array body, decided without asking it what else it responds to: its length and parts
      # after the head, or nothing after the head for HEAD, 1xx, 204 and 304.
      def array(request, headers, body)
        return bodiless(request, headers, body) if bodiless?(request, request.status)
        parts(request, headers, body)
        :done
      end

      # An Array is written with its length (in one write when small); any other `each` body goes
      # through the same path as a streaming body: raw when the app gave a length, chunked to
      # HTTP/1.1 clients otherwise, close-delimited to HTTP/1.0 ones.
      def enumerable(request, headers, body)
        return parts(request, headers, body.to_ary) if body.respond_to?(:to_ary)
        stream(request, headers, lambda do |out|
          body.each { |part| out.write(part) }
          out.close_write
        end)
      end

      def parts(request, headers, parts)
        length = Head.bytesize_of(parts)
        framing = headers["content-length"] ? "" : Head.content_length(length)
        head = head_for(request, headers, framing)
        if length + head.bytesize <= COALESCE
          @socket.write(Head.append_parts(head, parts), @timeout)
        else
          @socket.write(head, @timeout)
          parts.each { |part| @socket.write(part, @timeout) }
        end
        request.bytes = length
      end

      def stream(request, headers, body)
        chunked = request.http11? && !headers["content-length"]
        request.keepalive = false unless chunked || headers["content-length"]
        send_head(request, headers, chunked ? "transfer-encoding: chunked\r\n" : "")
        run_stream(request, body, Response::Stream.new(@socket, request.input, chunked: chunked, timeout: @timeout))
      end

      # The head goes out bare (`connection: upgrade`, no framing); the stream then reads the raw
      # socket (bytes the client sent after the request head first) and writes to it unframed.
      # The connection ends when the app closes the stream.
      def upgrade(request, headers, body)
        request.keepalive = false
        request.upgraded = true
        send_head(request, headers, "")
        raw = Response::RawInput.new(@socket, limit: @context.config.max_body_size)
        run_stream(request, body, Response::Stream.new(@socket, raw, chunked: false, timeout: @timeout))
      end

      def run_stream(request, body, stream)
        body.call(stream)
        stream.wait_closed
        request.bytes = stream.bytes
        :done
      end

      # The file goes out with its length through IO.copy_stream (sendfile on Linux).
      def file(request, headers, body)
        file = FileBody.new(body, headers, request.status)
        send_head(request, headers, headers["content-length"] ? "" : Head.content_length(file.length))
        request.bytes = file.copy_to(@socket.io, @timeout)
        :done
      end

      def hijack(request, headers)
        request.keepalive = false
        request.upgraded = request.status == 101 || headers.key?("upgrade")
        send_head(request, headers, "")
        headers["rack.hijack"].call(@socket.io)
        :hijacked
      end

      def send_head(request, headers, framing)
        @socket.write(head_for(request, headers, framing), @timeout)
      end

      def head_for(request, headers, framing)
        Head.build_into(@context.head_buffer, request.status, headers, framing, headers["date"] ? "" : @context.date.line,
                        connection_line(request))
      end

      def connection_line(request)
        return "connection: upgrade\r\n" if request.upgraded
        return "connection: close\r\n" unless request.keepalive
        request.http11? ? "" : "connection: keep-alive\r\n"
      end
    end
  end
end
