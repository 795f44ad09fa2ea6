# frozen_string_literal: true

require "test_helper"

# Chunk extensions and trailers cost the server parsing work but count against no body limit, so
# they have bounds of their own (issue 12, point 6; Puma's GHSA-c2f4-cvqm-65w2). Over a real socket.
class ChunkLimitsTest < Minitest::Test
  H = "POST /upload HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n"

  def setup
    app = lambda do |env|
      body = env["rack.input"].read
      [200, { "content-type" => "text/plain" }, ["#{body.bytesize}\n"]]
    end
    @server = start_server(app)
    @port = @server.bound_ports.first
  end

  def teardown
    stop_server(@server)
  end

  def test_8_mb_of_chunk_extensions_around_2_kb_of_data_is_400
    extension = ";x=#{'e' * 4090}" # 4094 bytes: under the per-line limit on every line
    chunks = Array.new(2048) { "1#{extension}\r\nd\r\n" }
    assert_operator chunks.sum(&:bytesize), :>, 8 * 1024 * 1024
    response = send_streaming("#{H}\r\n", chunks, "0\r\n\r\n")
    assert_match(/\AHTTP\/1.1 400 /, response)
    assert_match(/^connection: close\r\n/, response)
    assert_equal 1, response.scan("HTTP/1.1").size
  end

  def test_one_overlong_extension_is_400
    response = send_streaming("#{H}\r\n", ["1;x=#{'e' * 5000}\r\nd\r\n"], "0\r\n\r\n")
    assert_match(/\AHTTP\/1.1 400 /, response)
  end

  def test_ordinary_extensions_and_trailers_are_accepted
    signature = ";chunk-signature=#{'0f' * 32}" # the shape AWS SigV4 streaming uploads use
    chunks = Array.new(100) { "400#{signature}\r\n#{'d' * 1024}\r\n" }
    response = send_streaming("#{H}\r\n", chunks, "0#{signature}\r\nX-Checksum: abc\r\n\r\n")
    assert_match(/\AHTTP\/1.1 200 /, response)
    assert response.end_with?("\r\n\r\n102400\n"), response[-80..]
  end

  def test_trailer_section_is_bounded_like_the_header_section
    trailers = Array.new(200) { |i| "X-T#{i}: #{'v' * 400}\r\n" }.join # ~80 KiB > max_header_bytes
    response = send_streaming("#{H}\r\n", ["3\r\nabc\r\n"], "0\r\n#{trailers}\r\n")
    assert_match(/\AHTTP\/1.1 431 /, response)
  end

  private

  # Writes the pieces from a thread (stopping if the server has answered and closed) while this
  # thread reads, so the response is read before a reset can discard it.
  def send_streaming(head, chunks, tail)
    socket = connect(@port)
    writer = Thread.new do
      socket.write(head)
      chunks.each { |chunk| socket.write(chunk) }
      socket.write(tail)
    rescue Errno::EPIPE, Errno::ECONNRESET, IOError
      nil
    end
    read_all(socket, timeout: 10)
  ensure
    writer&.join(10)
    socket&.close
  end
end
