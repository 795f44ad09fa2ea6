# frozen_string_literal: true

require "protocol/http2/server"
require "protocol/http2/framer"
require "protocol/http2/stream"
require_relative "stream"
require_relative "flood_guard"
require_relative "encoder"
require_relative "decoder"
require_relative "../timeout_error"

module Heron
  module HTTP2
    # The server side of one HTTP/2 connection's protocol state (protocol-http2's Server), with
    # what a server exposed to the internet needs around it: frame writes from many fibers never
    # interleave, streams beyond the concurrency limit are refused (counting streams whose app
    # is still running, even after the client reset them: the "rapid reset" attack), and floods
    # of resets, SETTINGS and PINGs end the connection with ENHANCE_YOUR_CALM.
    class Session < Protocol::HTTP2::Server
      BLOCK = String.new(encoding: Encoding::BINARY).freeze
      HELD = 16 * 1024 # bytes held for the reading fiber's next wait at most (a body streams on)
      private_constant :BLOCK, :HELD

      # @param framer [Protocol::HTTP2::Framer]
      # @param max_streams [Integer] concurrent streams per connection.
      # @param new_stream [#call] configures each new {Stream} (see Stream#configure).
      # @param running [#call] how many streams' apps are running now.
      # @param output [SocketStream] the framer's stream, for frames packed by {Stream} (see #output).
      def initialize(framer, max_streams:, new_stream:, running:, output:)
        super(framer)
        @output = output
        @encoder = Encoder.new
        @decoder = Decoder.new
        @max_streams = max_streams
        @new_stream = new_stream
        @running = running
        @guard = FloodGuard.new
        @write_lock = Thread::Mutex.new
      end

      # Frame writes are whole: the socket may block mid-frame and another fiber may write
      # (protocol-http2 writes every frame inside this).
      def synchronize(&block) = @write_lock.synchronize(&block)

      # The connection's output, for bytes of whole frames written within a {#batch} (sent when it ends).
      # @return [SocketStream]
      # @raise [EOFError] when the connection is closed.
      def output
        raise EOFError, "connection closed" unless @framer
        @output
      end

      # Writes one frame and sends it, unless a {#batch} of this fiber's is open (the batch
      # sends it with the rest).
      # @param frame [Protocol::HTTP2::Frame]
      def write_frame(frame)
        write_frames { |framer| framer.write_frame(frame) }
      end

      # Writes frames (the block is given the framer) and sends them, as one {#batch}.
      def write_frames
        raise EOFError, "connection closed" unless @framer
        return yield @framer if @write_lock.owned?
        batch { yield @framer }
      end

      # Frames written in the block (by this fiber: stream sends go through #write_frame(s))
      # leave together in one write once it ends, or, while the reading fiber works through
      # frames it has read ({#working}), when it next waits for the client: the responses of
      # streams that came together leave together (up to HELD bytes). The block must not wait for anything but the
      # socket: other fibers' writes wait for it.
      # @return [Object] the block's value.
      def batch
        @write_lock.synchronize do
          result = yield
          @framer&.flush unless @working && @output.pending < HELD
          result
        end
      end

      # The reading fiber has frames to work through: writes wait for {#waiting}.
      # @return [void]
      def working = (@working = true)

      # The reading fiber is about to wait for the client: what was written meanwhile is sent.
      # @return [void]
      def waiting
        @working = false
        flush
      end

      # Sends what is written, then closes the connection.
      def close(error = nil)
        flush
      rescue IOError, SystemCallError, Heron::TimeoutError # EOFError is an IOError
        nil
      ensure
        super
      end

      # A new stream, or REFUSED_STREAM when max_streams apps are running already.
      def accept_stream(stream_id)
        return refuse(stream_id) if @running.call >= @max_streams
        create_stream(stream_id) { |connection, id| @new_stream.call(Stream.create(connection, id)) }
      end

      # A new stream past max_streams open ones is refused on its own (REFUSED_STREAM, RFC 9113
      # §5.1.2: a stream error), where protocol-http2 would end the whole connection with
      # GOAWAY, failing the streams in flight. Refusals count against the flood limit.
      def receive_headers(frame)
        id = frame.stream_id
        return super unless id.odd? && id > @remote_stream_id && !@streams.key?(id) && @streams.size >= @max_streams
        @remote_stream_id = id
        refuse(id).receive_headers(frame)
      end

      # Encodes a header block (HTTP2::Encoder: a hash lookup per field).
      # @param headers [Array<Array(String, String)>]
      # @param buffer [String]
      # @return [String] buffer
      def encode_headers(headers, buffer = BLOCK.dup)
        @encoder.encode(headers, buffer, @remote_settings.header_table_size)
      end

      # Decodes a header block (HTTP2::Decoder: one loop, Huffman-coded strings remembered).
      # @param data [String]
      # @return [Array<Array(String, String)>] frozen fields.
      def decode_headers(data)
        @decoder.decode(data, @local_settings.header_table_size)
      end

      # Counts resets against the flood limit.
      def receive_reset_stream(frame)
        @guard.count(:reset)
        super
      end

      # Counts PINGs against the flood limit.
      def receive_ping(frame)
        @guard.count(:ping) unless frame.acknowledgement?
        super
      end

      # Counts SETTINGS against the flood limit.
      def receive_settings(frame)
        @guard.count(:settings) unless frame.acknowledgement?
        super
      end

      # A stream answered with REFUSED_STREAM: its header block is still decoded, or the HPACK
      # table would go out of step with the client's.
      class RefusedStream < Protocol::HTTP2::Stream
        protected def ignore_headers(frame) = process_headers(frame)
      end

      private

      def flush
        return @framer&.flush if @write_lock.owned?
        @write_lock.synchronize { @framer&.flush }
      end

      def refuse(stream_id)
        @guard.count(:refused)
        refused = RefusedStream.new(self, stream_id, :open)
        refused.send_reset_stream(Protocol::HTTP2::REFUSED_STREAM)
        refused
      end
    end
  end
end
