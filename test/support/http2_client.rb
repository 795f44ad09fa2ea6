# frozen_string_literal: true

require "socket"
require "timeout"
require "protocol/http2/client"
require "protocol/http2/framer"
require "protocol/http2/stream"

# A small HTTP/2 client for tests over a real socket, on protocol-http2's Client: plain
# requests, and the raw frames the denial-of-service tests send.
class HTTP2TestClient
  # A client stream that keeps what it receives.
  class RecordingStream < Protocol::HTTP2::Stream
    def headers = (@headers ||= [])
    def body = (@body ||= +"".b)
    def reset_code = @reset_code

    def process_headers(frame) = super.tap { |fields| headers.concat(fields) }
    def process_data(frame) = super.tap { |data| body << data.to_s }

    def receive_reset_stream(frame)
      @reset_code = super
    end
  end

  attr_reader :client, :socket

  # @param io [IO] a connected socket (TCP or TLS).
  # @param settings [Array<Array(Integer, Integer)>] the client's SETTINGS (e.g. a zero window).
  def initialize(io, settings: [])
    @socket = io
    @client = Protocol::HTTP2::Client.new(Protocol::HTTP2::Framer.new(io))
    @client.send_connection_preface(settings) { nil }
  end

  # Sends a request on a new stream.
  # @param finish [Boolean] false leaves the request body open (more may follow, or never).
  # @return [Protocol::HTTP2::Stream]
  def request(method, path, body: nil, headers: [], finish: true)
    stream = @client.create_stream { |connection, id| RecordingStream.create(connection, id) }
    fields = [[":method", method], [":scheme", "http"], [":authority", "localhost"], [":path", path]] + headers
    stream.send_headers(fields, body || !finish ? 0 : Protocol::HTTP2::END_STREAM)
    stream.send_data(body, finish ? Protocol::HTTP2::END_STREAM : 0) if body
    stream
  end

  # Reads frames until every given stream is closed.
  # @return [Array<RecordingStream>] the streams.
  def wait(*streams, timeout: 5)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
    until streams.all?(&:closed?)
      left = deadline - Process.clock_gettime(Process::CLOCK_MONOTONIC)
      raise "timed out" unless left.positive? && readable?(left)
      @client.read_frame
    end
    streams
  end

  # Reads frames until the server closes or sends GOAWAY; returns the GOAWAY's error code.
  # @return [Integer, nil]
  def goaway_code(timeout: 5)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
    loop do
      raise "timed out" if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      frame = @client.framer.read_frame
      return frame.unpack[1] if frame.is_a?(Protocol::HTTP2::GoawayFrame)
    end
  rescue EOFError, Errno::ECONNRESET
    nil
  end

  # The first DATA frame's payload, the frames read raw (the client's stream state skipped:
  # for requests written as raw frames).
  # @raise [RuntimeError] when a GOAWAY comes first (its code and message in the error's).
  def first_data(timeout: 30)
    Timeout.timeout(timeout) do
      loop do
        frame = @client.framer.read_frame
        return frame.unpack if frame.is_a?(Protocol::HTTP2::DataFrame)
        raise "GOAWAY #{frame.unpack.inspect}" if frame.is_a?(Protocol::HTTP2::GoawayFrame)
      end
    end
  end

  # Whether a frame may be read without blocking past `timeout` (a plain socket's wait; a TLS
  # one may hold decrypted bytes the kernel does not see, so it is read at once).
  def readable?(timeout) = !@socket.is_a?(BasicSocket) || @socket.wait_readable(timeout)

  # Writes one raw frame.
  def write(frame) = @client.framer.write_frame(frame)

  def close = @socket.close
end
