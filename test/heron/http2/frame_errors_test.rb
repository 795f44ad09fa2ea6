# frozen_string_literal: true

require "test_helper"
require_relative "../../support/http2_client"

# A frame whose header no payload can make right ends the connection with the error RFC 9113
# gives (FRAME_SIZE_ERROR for a length past SETTINGS_MAX_FRAME_SIZE or too short for the
# frame's own fields, §4.2; PROTOCOL_ERROR for padding past the payload, §6.1, §6.2), over a
# real h2c connection to the real server: HTTP2::FrameReader checks each frame header as it
# takes it off the read buffer. Raw bytes, so nothing on the client's side refuses to send them.
class HeronHTTP2FrameErrorsTest < Minitest::Test
  include ServerHelper

  APP = lambda do |env|
    [200, { "content-type" => "text/plain" }, ["served #{env['rack.input'].read.bytesize}"]]
  end
  GET = "\x82\x86\x84".b # :method GET, :scheme http, :path / (static table)
  POST = "\x83\x86\x84".b # :method POST, the request's body to come
  DATA = 0x0
  HEADERS = 0x1
  GOAWAY = 0x7
  END_STREAM = Protocol::HTTP2::END_STREAM
  END_HEADERS = Protocol::HTTP2::END_HEADERS
  PADDED = Protocol::HTTP2::PADDED
  PRIORITY = Protocol::HTTP2::PRIORITY
  PRIORITY_FIELDS = "\x00\x00\x00\x00\x0f".b # stream dependency 0, weight 16

  def client(port) = HTTP2TestClient.new(TCPSocket.new("127.0.0.1", port))

  # A frame's bytes as sent, whatever its length field says.
  def frame(type, flags, id, payload, length: payload.bytesize)
    [length >> 16, length & 0xffff, type, flags, id].pack("CnCCN") + payload
  end

  # A POST's stream opened, and the frame that follows on it.
  def on_a_body(data_frame) = frame(HEADERS, END_HEADERS, 1, POST) + data_frame

  # Frames the old reading let through to protocol-http2's frame classes, which failed on them
  # with NoMethodError or TypeError (the connection dropped with no GOAWAY).
  def test_a_frame_too_short_for_its_own_fields_is_a_frame_size_error
    faults = {
      "a padded DATA frame with no Pad Length" => on_a_body(frame(DATA, PADDED | END_STREAM, 1, "")),
      "a padded HEADERS frame with no Pad Length" => frame(HEADERS, PADDED | END_HEADERS | END_STREAM, 1, ""),
      "a HEADERS frame shorter than its priority fields" => frame(HEADERS, PRIORITY | END_HEADERS | END_STREAM, 1, GET),
      "a GOAWAY shorter than its last stream id and error code" => frame(GOAWAY, 0, 0, "\x00\x00\x00\x00".b)
    }
    expect_goaway(faults, Protocol::HTTP2::FRAME_SIZE_ERROR)
  end

  def test_padding_past_what_the_fields_leave_is_a_protocol_error
    faults = {
      "padding into a HEADERS frame's priority fields" =>
        frame(HEADERS, PADDED | PRIORITY | END_HEADERS | END_STREAM, 1, "\x04#{PRIORITY_FIELDS}\x00\x00\x00".b),
      "padding longer than a DATA frame's payload" => on_a_body(frame(DATA, PADDED | END_STREAM, 1, "\x05abcd".b)),
      "padding as long as a HEADERS frame's payload" => frame(HEADERS, PADDED | END_HEADERS | END_STREAM, 1, "\x04#{GET}".b)
    }
    expect_goaway(faults, Protocol::HTTP2::PROTOCOL_ERROR)
  end

  # Whole frames past 16,384 bytes (we advertise no larger SETTINGS_MAX_FRAME_SIZE): the reader
  # refuses them on their header, and a frame sent whole is no exception.
  def test_a_frame_longer_than_settings_max_frame_size_is_a_frame_size_error
    faults = {
      "a whole DATA frame of 16,385 bytes" => on_a_body(frame(DATA, END_STREAM, 1, "x" * 16_385)),
      "a whole HEADERS frame of 16,385 bytes" => frame(HEADERS, END_HEADERS | END_STREAM, 1, GET + ("\x00" * 16_382)),
      "a DATA frame's header saying 2^24 - 1, no payload sent" => on_a_body(frame(DATA, 0, 1, "", length: 0xffffff))
    }
    expect_goaway(faults, Protocol::HTTP2::FRAME_SIZE_ERROR)
  end

  # The same frames made right are served: padding, priority fields, a body of the most one
  # frame may carry; each whole in one write, and split over nine (headers and payloads cut
  # anywhere: the reader waits for the rest).
  def test_padded_prioritised_and_largest_frames_are_served
    requests = {
      "a padded, prioritised HEADERS frame" => [frame(HEADERS, PADDED | PRIORITY | END_HEADERS | END_STREAM, 1, "\x03#{PRIORITY_FIELDS}#{GET}\x00\x00\x00".b), "served 0"],
      "a padded DATA frame" => [on_a_body(frame(DATA, PADDED | END_STREAM, 1, "\x02abcd\x00\x00".b)), "served 4"],
      "a DATA frame of 16,384 bytes" => [on_a_body(frame(DATA, END_STREAM, 1, "x" * 16_384)), "served 16384"]
    }
    sends = requests.flat_map do |name, (bytes, expected)|
      [[bytes], bytes.each_char.each_slice((bytes.bytesize / 9) + 1).map(&:join)].map { |writes| [name, [writes, expected]] }
    end
    each_connection(sends) do |h2, name, (writes, expected)|
      writes.each { |piece| h2.socket.write(piece) }
      assert_equal expected, h2.first_data, "#{name} in #{writes.size} writes"
    end
  end

  private

  # Sends each fault on a connection of its own and expects GOAWAY with `code`, the server
  # going on to serve the next connection.
  def expect_goaway(faults, code)
    each_connection(faults) do |h2, fault, bytes|
      h2.socket.write(bytes)
      assert_equal code, h2.goaway_code(timeout: 30), fault
    end
  end

  # Runs the block with each named item and a new connection (no Nagle delay between its
  # writes) to one server.
  def each_connection(items)
    with_server(APP) do |port, _server|
      items.each do |name, item|
        h2 = client(port)
        h2.socket.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, 1)
        yield h2, name, item
      ensure
        h2&.close
      end
    end
  end
end
