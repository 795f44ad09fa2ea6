# frozen_string_literal: true

require "test_helper"
require "heron/attack"

class ResponseReaderTest < Minitest::Test
  def read(bytes, head: false, close: true)
    client, server = UNIXSocket.pair
    server.write(bytes)
    server.close if close
    Heron::Attack::ResponseReader.new(Heron::Attack::Connection.new(client)).read(head: head)
  ensure
    client&.close
    server&.close
  end

  def test_content_length
    response = read("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
    assert_equal [200, 5, true], response.to_a
    # the last of repeated fields; blanks before the colon and around the value; names in any case
    assert_equal 3, read("HTTP/1.1 200 OK\r\ncontent-length: 9\r\nX-Content-Length-Note: 1\r\nCONTENT-LENGTH \t: 3 \r\n\r\nabc", close: false).bytes
  end

  def test_chunked_with_extension_and_trailer
    response = read("HTTP/1.1 201 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=1\r\nabc\r\nA\r\n0123456789\r\n0\r\nT: 1\r\n\r\n")
    assert_equal [201, 13, true], response.to_a
    assert_equal 2, read("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", close: false).bytes
  end

  def test_close_delimited_body
    response = read("HTTP/1.1 200 OK\r\n\r\nuntil the end")
    assert_equal [200, 13, false], response.to_a
  end

  def test_connection_close_and_http_1_0
    assert_equal false, read("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").keepalive
    assert_equal false, read("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").keepalive
    assert_equal true, read("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n").keepalive
    assert_equal false, read("HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n").keepalive
    assert_equal true, read("HTTP/1.1 200 OK\r\nConnection: closed\r\nContent-Length: 0\r\n\r\n", close: false).keepalive
    assert_equal false, read("HTTP/1.0 200 OK\r\nConnection: keep-alive, x\r\nContent-Length: 0\r\n\r\n").keepalive
  end

  def test_head_and_no_body_statuses
    assert_equal 0, read("HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", head: true, close: false).bytes
    assert_equal 0, read("HTTP/1.1 204 No Content\r\n\r\n", close: false).bytes
    assert_equal 0, read("HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n", close: false).bytes
  end

  def test_skips_interim_responses
    response = read("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early\r\nLink: x\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    assert_equal 200, response.status
  end

  def test_malformed_responses
    assert_raises(Heron::Attack::ProtocolError) { read("SPDY/3 200\r\n\r\n") }
    assert_raises(Heron::Attack::ProtocolError) { read("HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n") }
    assert_raises(Heron::Attack::ProtocolError) { read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n") }
  end

  def test_eof_mid_response
    assert_raises(EOFError) { read("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc") }
    assert_raises(EOFError) { read("HTTP/1.1 200") }
  end

  # A generator process reads 2,500 responses a second at bench/slow_requests.rb's 5,000/s, and
  # each of its collections marks thousands of waiting fibers: the reader makes the head, one
  # lowercased copy and the Response (with the Connection's reads: 8 objects a response here).
  # 22 while it scanned the head for the framing headers with a Regexp (a MatchData and
  # Strings per header, a Hash, the version's String, an Array of three).
  def test_a_response_costs_few_objects
    client, server = UNIXSocket.pair
    connection = Heron::Attack::Connection.new(client)
    bytes = "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\nx-request-id: 8c842f03e19a-1\r\n" \
            "date: Thu, 26 Nov 2026 22:18:10 GMT\r\n\r\nok"
    exchange = ->(n) { n.times { server.write(bytes) && Heron::Attack::ResponseReader.new(connection).read } }
    exchange.call(50)
    before = GC.stat(:total_allocated_objects)
    exchange.call(200)
    assert_operator (GC.stat(:total_allocated_objects) - before) / 200.0, :<=, 10, "objects allocated per response read"
  ensure
    client&.close
    server&.close
  end

  def test_a_head_without_end_is_bounded
    client, server = UNIXSocket.pair
    writer = Thread.new do
      server.write("HTTP/1.1 200 OK\r\n")
      200.times { server.write("X-Filler: #{'y' * 1000}\r\n") } # 200 KB, never a blank line
      server.close_write # so a reader without the bound ends in EOFError instead of waiting
    rescue IOError, SystemCallError
      nil
    end
    error = assert_raises(Heron::Attack::ProtocolError) do
      Heron::Attack::ResponseReader.new(Heron::Attack::Connection.new(client)).read
    end
    assert_match(/response head larger than 65536 bytes/, error.message)
  ensure
    client&.close
    server&.close
    writer&.join
  end
end
