# frozen_string_literal: true

require "protocol/http2/error"
require_relative "../native"
Heron::Native.load("heron_ext")

module Heron
  module HTTP2
    # Takes HTTP/2 frames off the front of a connection's read buffer, one C call per frame
    # (ext/heron/heron_http2_frame_reader.c): the frame header read and its bounds checked, and
    # the frame, once all of it is here, consumed with its payload returned. Session#read_frame
    # drives it over Connection::BufferedSocket's buffer, the one HTTP/1.1 parses its heads from.
    #
    #   reader = Heron::HTTP2::FrameReader.new(16_384, 65_536, 1024) # max_frame_size, block_limit, keep
    #   reader.read(buffer) # => the payload (the frame consumed), false, or nil
    #   [reader.type, reader.flags, reader.stream_id, reader.length] # the frame #read took
    #
    # #read gives nil while less than a frame header (with a padded frame's Pad Length) is
    # buffered, consuming nothing; false when it took the header and the payload is still to
    # come, or CONTINUATION frames go on with its block (the caller reads the rest with
    # protocol-http2's frame classes); else the payload. A frame longer than max_frame_size
    # (our SETTINGS_MAX_FRAME_SIZE in force), of a length its type does not allow, or padded
    # past its payload raises Protocol::HTTP2::FrameSizeError or ProtocolError, as RFC 9113
    # says (a field block's first frame past block_limit: ENHANCE_YOUR_CALM), on the header
    # alone, before any payload is waited for. Every method is documented in the C file.
    class FrameReader
    end
  end
end
