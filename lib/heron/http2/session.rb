# frozen_string_literal: true

require "protocol/http2/server"
require "protocol/http2/framer"
require "protocol/http2/stream"
require_relative "stream"
require_relative "header_block"
require_relative "flood_guard"
require_relative "encoder"
require_relative "decoder"
require_relative "frame_reader"
require_relative "../connection/buffered_socket"
require_relative "../timeout_error"

module Heron
  module HTTP2
    # The server side of one HTTP/2 connection's protocol state (protocol-http2's Server), with
    # what a server exposed to the internet needs around it: frame writes from many fibers never
    # interleave, streams beyond the concurrency limit are refused (counting streams whose app
    # is still running, even after the client reset them: the "rapid reset" attack), and floods
    # of resets, SETTINGS and PINGs end the connection with ENHANCE_YOUR_CALM.
    #
    # Frames are read here rather than by protocol-http2's Framer: FrameReader (C) takes each
    # off the connection's read buffer in one call, its header's bounds checked (the frame size,
    # the lengths each type allows, padding), and a request's HEADERS frame, whole and plain
    # (END_HEADERS, no padding, no priority), opens its stream straight from it
    # (#read_request), where the framer made a Frame object and the state machines passed it
    # through some forty method calls, its header block read into the request's env in one C
    # call (EnvBuilder#decode); every other frame becomes protocol-http2's Frame object as
    # before, its payload read by it when it was not all here.
    class Session < Protocol::HTTP2::Server
      # protocol-http2's frame classes by type, with a bounded header block (HeaderBlock).
      FRAMES = Protocol::HTTP2::FRAMES.dup.tap { |frames| frames[Protocol::HTTP2::HeadersFrame::TYPE] = HeaderBlock }.freeze
      BLOCK = String.new(encoding: Encoding::BINARY).freeze
      HELD = 16 * 1024 # bytes held for the reading fiber's next wait at most (a body streams on)
      HEADERS = Protocol::HTTP2::HeadersFrame::TYPE
      END_HEADERS = Protocol::HTTP2::END_HEADERS
      END_STREAM = Protocol::HTTP2::END_STREAM
      # The flags of a HEADERS frame #read_request takes: END_HEADERS, and neither of these.
      PLAIN = Protocol::HTTP2::END_HEADERS | Protocol::HTTP2::PADDED | Protocol::HTTP2::PRIORITY
      private_constant :BLOCK, :HELD, :HEADERS, :END_HEADERS, :END_STREAM, :PLAIN

      # @param framer [Protocol::HTTP2::Framer]
      # @param max_streams [Integer] concurrent streams per connection.
      # @param stream_settings [StreamSettings] what each new {Stream} is given.
      # @param running [#call] how many streams' apps are running now.
      # @param output [SocketStream] the framer's stream, for frames packed by {Stream} (see #output).
      # @param env [EnvBuilder] reads a request's header block into its env (#read_request).
      def initialize(framer, max_streams:, stream_settings:, running:, output:, env:)
        super(framer)
        @output = output
        @input = output.buffer
        @frames = FrameReader.new(@local_settings.maximum_frame_size, HeaderBlock.max_bytes, Heron::Connection::BufferedSocket::KEEP_ROOM)
        @table_size = @local_settings.header_table_size
        @env = env
        @encoder = Encoder.new
        @decoder = Decoder.new
        @max_streams = max_streams
        @stream_settings = stream_settings
        @running = running
        @guard = FloodGuard.new
        @write_lock = Thread::Mutex.new
      end

      # Reads one frame and acts on it, as protocol-http2's Connection#read_frame does (a protocol
      # or HPACK error sends GOAWAY and is raised), a request's plain HEADERS frame without a
      # Frame object (#read_request). Waits for the client while not even a frame header is here.
      # @yield [Protocol::HTTP2::Frame] each frame read the generic way, before it is applied.
      # @return [Protocol::HTTP2::Frame, nil] the frame, or nil for a request read straight.
      def read_frame
        @output.receive while (payload = @frames.read(@input)).nil?
        type = @frames.type
        return if type == HEADERS && payload && read_request(payload)
        frame = (FRAMES[type] || Protocol::HTTP2::Frame).new(@frames.stream_id, @frames.flags, type, @frames.length, payload || nil)
        frame.read(@output, @frames.max_frame_size) unless payload # its payload (or block) still to come
        return if ignore_frame?(frame)
        yield frame if block_given?
        frame.apply(self)
        frame
      rescue Protocol::HTTP2::GoawayError
        raise
      rescue Protocol::HTTP2::ProtocolError => e
        send_goaway(e.code || Protocol::HTTP2::PROTOCOL_ERROR, e.message)
        raise
      rescue Protocol::HPACK::Error => e
        send_goaway(Protocol::HTTP2::COMPRESSION_ERROR, e.message)
        raise
      end

      # Reads and acts on frames (#read_frame) until the connection closes.
      # @return [void]
      def read_frames
        read_frame until @state == :closed || @framer.nil? # protocol-http2's #closed?, without a call per frame
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

      # A new stream, or REFUSED_STREAM when max_streams apps are running already. An even id
      # (the server's own, RFC 9113 §5.1.1) is a connection error, as in protocol-http2's
      # (whose check this method replaced: such a HEADERS frame was served as a request).
      # @raise [Protocol::HTTP2::ProtocolError] for an id the client may not open.
      def accept_stream(stream_id)
        raise Protocol::HTTP2::ProtocolError, "Invalid stream id: #{stream_id}" unless valid_remote_stream_id?(stream_id)
        return refuse(stream_id) if @running.call >= @max_streams
        create_stream(stream_id) { |connection, id| Stream.create(connection, id, @stream_settings) }
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

      # Encodes a header block (HTTP2::Encoder, in C: one call per block). Heron's own frames go
      # through #pack_headers and #pack_response; this keeps protocol-http2's callers on the same HPACK table.
      # @param headers [Array<Array(String, String)>]
      # @param buffer [String]
      # @return [String] buffer
      def encode_headers(headers, buffer = BLOCK.dup)
        @encoder.encode(headers, buffer, @remote_settings.header_table_size)
      end

      # Packs a header block's HEADERS (and CONTINUATION) frames into the output (SocketStream#frames).
      # @param id [Integer] the stream's id.
      # @param fields [Array<Array(String, String)>]
      # @param flags [Integer] END_STREAM or 0, on the last frame.
      # @raise [EOFError] when the connection is closed.
      def pack_headers(id, fields, flags)
        output.frames(@encoder, id, fields, flags, @remote_settings.maximum_frame_size, @remote_settings.header_table_size)
      end

      # Packs a response into the output in one C call (SocketStream#frames): its HEADERS (and
      # CONTINUATION) frames and, when `data` fits `room` (the stream's send window), the
      # connection's and the client's SETTINGS_MAX_FRAME_SIZE, one DATA frame of it that ends
      # the stream, the connection's window consumed by its bytes (the stream's is the caller's,
      # Stream#send_response); else the HEADERS alone, the stream left open for the body. Under
      # the write lock (the windows are checked and consumed with no wait between).
      # @param id [Integer] the stream's id.
      # @param fields [Array<Array(String, String)>]
      # @param data [String] empty: the HEADERS frame ends the stream.
      # @param room [Integer] what the stream's send window allows now.
      # @return [Boolean] whether the stream's end went out (with all of `data`).
      # @raise [EOFError] when the connection is closed.
      def pack_response(id, fields, data, room)
        raise EOFError, "connection closed" unless @framer
        size = data.bytesize
        max = @remote_settings.maximum_frame_size
        whole = size <= room && size <= @remote_window.available && size <= max
        @output.frames(@encoder, id, fields, whole ? END_STREAM : 0, max, @remote_settings.header_table_size, (data if whole && size.positive?))
        @remote_window.consume(size) if whole && size.positive?
        whole
      end

      # Decodes a header block (HTTP2::Decoder, in C), the header list within max_header_bytes.
      # @param data [String]
      # @return [Array<Array(String, String)>] frozen fields.
      # @raise [Protocol::HPACK::CompressionError, Protocol::HTTP2::ProtocolError]
      def decode_headers(data)
        @decoder.decode(data, @local_settings.header_table_size, @stream_settings.header_limit)
      end

      # The most bytes one DATA frame may carry now: the connection's send window, within the
      # client's SETTINGS_MAX_FRAME_SIZE (protocol-http2's, in one call rather than four).
      # @return [Integer]
      def available_frame_size
        size = @remote_settings.maximum_frame_size
        available = @remote_window.available
        available < size ? available : size
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

      # Counts SETTINGS against the flood limit. Our SETTINGS_MAX_FRAME_SIZE, once the client
      # acknowledged it, bounds the frames read from then on.
      def receive_settings(frame)
        @guard.count(:settings) unless frame.acknowledgement?
        super.tap { local_settings_changed }
      end

      # A stream answered with REFUSED_STREAM: its header block is still decoded, or the HPACK
      # table would go out of step with the client's.
      class RefusedStream < Protocol::HTTP2::Stream
        protected def ignore_headers(frame) = process_headers(frame)
      end

      private

      # Opens the stream a whole HEADERS frame FrameReader took (within the frame size and header
      # block limits: it checked) asks for, when the frame is plain and the stream new and
      # allowed to run now, and hands it its request, the block read straight into the env
      # (EnvBuilder#decode: what Connection#receive_headers, #accept_stream and
      # Stream#receive_headers do for one, and HPACK and the env in one C call).
      # @return [Boolean] whether it did: else the frame goes the generic way (Session#receive_headers
      #   and #accept_stream refuse it; protocol-http2 rejects a bad stream id, reads padding and priority).
      def read_request(block)
        flags = @frames.flags
        id = @frames.stream_id
        return false unless flags & PLAIN == END_HEADERS && @state == :open && id & 1 == 1 && id > @remote_stream_id &&
                            @streams.size < @max_streams && @running.call < @max_streams
        head = @env.decode(@decoder, block, @table_size, @stream_settings.header_limit)
        stream = @streams[id] = Stream.new(self, id, @stream_settings)
        @remote_stream_id = id
        stream.receive_request(head, flags & END_STREAM != 0)
        true
      end

      def flush
        return unless @framer
        return @output.flush if @write_lock.owned?
        @write_lock.synchronize { @output.flush }
      end

      # Our settings the client acknowledged bound what is read from then on: the frame size
      # (FrameReader) and the HPACK table (#read_request).
      def local_settings_changed
        @frames.max_frame_size = @local_settings.maximum_frame_size
        @table_size = @local_settings.header_table_size
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
