# frozen_string_literal: true

require "test_helper"
require "heron/attack"

class ConnectionTest < Minitest::Test
  Connection = Heron::Attack::Connection

  def pair
    client, server = UNIXSocket.pair
    [Connection.new(client), server]
  end

  def test_lines_split_across_reads
    connection, server = pair
    server.write("ab")
    thread = Thread.new do
      sleep(0.05)
      server.write("c\r\nde\r\n")
    end
    assert_equal "abc", connection.read_line
    assert_equal "de", connection.read_line
  ensure
    thread&.join
    connection&.close
  end

  def test_skip_and_skip_to_eof_count_bytes
    connection, server = pair
    server.write("line\r\n0123456789tail")
    server.close
    assert_equal "line", connection.read_line
    assert_equal 4, connection.skip(4)
    assert_equal 10, connection.skip_to_eof
  ensure
    connection&.close
  end

  def test_exchange_counts_uses
    connection, server = pair
    server.write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    response = connection.exchange("GET / HTTP/1.1\r\n\r\n")
    assert_equal 200, response.status
    assert_equal 1, connection.uses
    assert_equal "GET / HTTP/1.1\r\n", server.gets
  ensure
    connection&.close
  end

  def test_open_connects_and_refuses
    listener = TCPServer.new("127.0.0.1", 0)
    connection = Connection.open(Addrinfo.tcp("127.0.0.1", listener.addr[1]))
    assert_equal 0, connection.uses
    connection.close
    connection.close # closing twice is harmless
    port = listener.addr[1]
    listener.close
    assert_raises(Errno::ECONNREFUSED) { Connection.open(Addrinfo.tcp("127.0.0.1", port)) }
  end
end
