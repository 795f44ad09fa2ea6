# frozen_string_literal: true

require "test_helper"

# Full and partial rack.hijack.
class HijackTest < Minitest::Test
  def test_full_hijack_hands_over_the_socket
    app = lambda do |env|
      io = env["rack.hijack"].call
      io.write("HTTP/1.1 200 OK\r\ncontent-length: 8\r\n\r\nhijacked")
      io.close
      [200, {}, []]
    end
    with_server(app) do |port|
      response = raw_request(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_equal "HTTP/1.1 200 OK\r\ncontent-length: 8\r\n\r\nhijacked", response
    end
  end

  def test_partial_hijack_writes_head_then_calls_back
    app = lambda do |_env|
      callback = lambda do |io|
        io.write("raw bytes")
        io.close
      end
      [101, { "upgrade" => "echo", "rack.hijack" => callback }, []]
    end
    with_server(app) do |port|
      response = raw_request(port, "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: echo\r\nConnection: upgrade\r\n\r\n")
      assert_match(/\AHTTP\/1.1 101 Switching Protocols\r\n/, response)
      assert_match(/upgrade: echo\r\n/, response)
      assert response.end_with?("\r\n\r\nraw bytes")
    end
  end
end
