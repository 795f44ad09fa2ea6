# frozen_string_literal: true

require "test_helper"
require_relative "../../support/http2_client"

# A malformed HPACK block ends the connection with COMPRESSION_ERROR (RFC 7541 §2.3.3, RFC 9113
# §4.3), over a real h2c connection to the real server, whether the block comes in one HEADERS
# frame (read straight into the env, HTTP2::Session#read_request) or split over a CONTINUATION
# (read the generic way). Each block starts with a whole request (:method GET, :scheme http,
# :path /), so a decoder that let the fault pass would serve it.
class HeronHTTP2HPACKErrorsTest < Minitest::Test
  include ServerHelper

  APP = ->(_env) { [200, { "content-type" => "text/plain" }, ["served"]] }
  REQUEST = "\x82\x86\x84" # :method GET, :scheme http, :path / (static table)
  BAD = {
    "Huffman padding longer than 7 bits" => "#{REQUEST}\x41\x82\x1f\xff", # :authority "a" + 11 one bits
    "Huffman padding not EOS's ones" => "#{REQUEST}\x41\x81\x18", # :authority "a" + 000
    "the EOS symbol in a Huffman string" => "#{REQUEST}\x41\x84\xff\xff\xff\xff", # EOS (30 ones) + 2
    "an integer past four continuation bytes" => "\x3f\x80\x80\x80\x80\x80\x00#{REQUEST}", # size update, 31
    "a table size update above our SETTINGS_HEADER_TABLE_SIZE" => "\x3f\xe2\x1f#{REQUEST}", # 4097 > 4096
    "a table size update after a field" => "\x82\x20\x86\x84", # update to 0 after :method
    "an index past the dynamic table" => "#{REQUEST}\xbe", # 62, the table empty
    "a literal longer than the block" => "#{REQUEST}\x01\x7f\x80\x01abc" # :authority of 255 bytes, 3 sent
  }.transform_values(&:b).freeze

  def client(port) = HTTP2TestClient.new(TCPSocket.new("127.0.0.1", port))

  def test_a_malformed_block_in_one_headers_frame_ends_the_connection
    each_fault { |h2, block| h2.write(headers(block)) }
  end

  def test_a_malformed_block_split_over_a_continuation_ends_the_connection
    each_fault do |h2, block|
      first = headers(block.byteslice(0, 2))
      first.clear_flags(Protocol::HTTP2::END_HEADERS)
      rest = Protocol::HTTP2::ContinuationFrame.new(1, Protocol::HTTP2::END_HEADERS)
      rest.pack(block.byteslice(2..))
      h2.write(first)
      h2.write(rest)
    end
  end

  # The blocks above but for their fault are served: what ends the connection is the fault.
  def test_the_same_requests_well_formed_are_served
    with_server(APP) do |port, _server|
      ["#{REQUEST}\x41\x81\x1f", "\x3f\xe1\x1f#{REQUEST}", "\x20\x82\x86\x84", "#{REQUEST}\x01\x03abc"].each do |block|
        h2 = client(port)
        h2.write(headers(block.b))
        assert_equal "served", h2.first_data, block.inspect
      ensure
        h2&.close
      end
    end
  end

  private

  # Sends each faulty block (the block writes it) on a connection of its own, and expects GOAWAY
  # with COMPRESSION_ERROR.
  def each_fault
    with_server(APP) do |port, _server|
      BAD.each do |fault, block|
        h2 = client(port)
        yield h2, block
        assert_equal Protocol::HTTP2::COMPRESSION_ERROR, h2.goaway_code(timeout: 30), fault
      ensure
        h2&.close
      end
    end
  end

  def headers(block)
    frame = Protocol::HTTP2::HeadersFrame.new(1, Protocol::HTTP2::END_STREAM | Protocol::HTTP2::END_HEADERS)
    frame.pack(block)
    frame
  end
end
