# frozen_string_literal: true

require_relative "../native"
Heron::Native.load("heron_ext")

module Heron
  module HTTP2
    # The HPACK encoder (RFC 7541) of one connection's response headers, a block in one C call
    # (ext/heron/heron_http2_encoder.c, where each method is documented).
    #
    #   encoder = Heron::HTTP2::Encoder.new          # table_size = 4096 at first
    #   encoder.encode(fields, buffer, table_size)   # => buffer, the block appended
    #   encoder.frames(out, id, fields, flags, max_frame_size, table_size, data)
    #                                                # => out, HEADERS (+ CONTINUATION) and DATA frames appended
    #
    # A field in the static or the dynamic table goes out as its index (one byte for most);
    # any other as a literal, its name by its static index when it has one, and added to the
    # dynamic table, unless its values are (nearly) never sent twice (x-request-id, x-runtime,
    # etag, set-cookie, last-modified: indexed, each would evict a field that repeats). Strings
    # go out without Huffman coding, which costs a few bytes of the fields not indexed already.
    # The table follows the client's SETTINGS_HEADER_TABLE_SIZE (a change announced at the next
    # block's start) up to 4096 bytes, whatever more the client allows.
    class Encoder
    end
  end
end
