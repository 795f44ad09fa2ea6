# frozen_string_literal: true

require "socket"
require "base64"
require "digest/sha1"

# A minimal RFC 6455 client over a raw TCPSocket, written for the tests so that every byte on
# the wire is the test's own: the handshake can go out in the same write as the first frame
# (so the server finds frame bytes already buffered behind the request head).
class WebSocketClient
  GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
  TEXT = 0x1
  BINARY = 0x2
  CLOSE = 0x8

  attr_reader :socket, :head

  # @param port [Integer]
  # @param first [Array(Integer, String), nil] a frame to send in the same write as the handshake.
  def initialize(port, first: nil, path: "/")
    @socket = TCPSocket.new("127.0.0.1", port)
    @key = Base64.strict_encode64(Random.bytes(16))
    request = "GET #{path} HTTP/1.1\r\nHost: 127.0.0.1:#{port}\r\nUpgrade: websocket\r\n" \
              "Connection: Upgrade\r\nSec-WebSocket-Key: #{@key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    @socket.write(first ? request + self.class.frame(*first) : request)
    @head = read_head
  end

  # @return [String] the Sec-WebSocket-Accept value the server must send.
  def expected_accept = Base64.strict_encode64(Digest::SHA1.digest(@key + GUID))

  # Sends one masked frame.
  def send_frame(opcode, payload) = @socket.write(self.class.frame(opcode, payload))

  # @return [Array(Integer, String)] opcode and payload of the next frame.
  def read_frame
    Timeout.timeout(5) do
      first, second = @socket.read(2).unpack("CC")
      length = second & 0x7f
      length = @socket.read(2).unpack1("n") if length == 126
      length = @socket.read(8).unpack1("Q>") if length == 127
      [first & 0x0f, @socket.read(length).to_s]
    end
  end

  # Sends a close frame (1000), reads the server's close frame, then waits for end of stream.
  # @return [Array(Integer, Integer, Boolean)] opcode, close code, whether the server closed.
  def close_handshake
    send_frame(CLOSE, [1000].pack("n"))
    opcode, payload = read_frame
    eof = Timeout.timeout(ProcessHelper::PATIENCE) { @socket.read(1).nil? }
    [opcode, payload.unpack1("n"), eof]
  ensure
    @socket.close
  end

  # @return [String] a masked client frame.
  def self.frame(opcode, payload)
    payload = payload.b
    mask = Random.bytes(4)
    length = payload.bytesize
    header = [0x80 | opcode].pack("C")
    header << if length < 126 then [0x80 | length].pack("C")
              elsif length < 65_536 then [0x80 | 126, length].pack("Cn")
              else [0x80 | 127, length].pack("CQ>")
              end
    masked = payload.bytes.each_with_index.map { |byte, i| byte ^ mask.getbyte(i % 4) }.pack("C*")
    header + mask + masked
  end

  private

  def read_head
    Timeout.timeout(5) do
      head = String.new
      head << @socket.readpartial(1) until head.end_with?("\r\n\r\n")
      head
    end
  end
end
