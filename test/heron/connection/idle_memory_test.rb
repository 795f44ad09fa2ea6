# frozen_string_literal: true

require "test_helper"

# An idle keep-alive connection holds no finished request (issue 12, point 8): not its env, its
# header values, its rack.input or its 100-continue state, only what the next request needs.
class IdleMemoryTest < Minitest::Test
  CONNECTIONS = 100
  MARK = "m" * 4096
  REQUEST = "GET / HTTP/1.1\r\nHost: x\r\nX-Big: #{MARK}\r\n\r\n".freeze
  APP = ->(_env) { [200, { "content-type" => "text/plain", "content-length" => "2" }, ["ok"]] }

  # Without Rack::Lint: Lint replaces rack.hijack with a proc that closes over the env, and the
  # connection's fiber keeps a reference to the hijack callable; in production that callable is
  # the connection's own lambda, which holds no request.
  def test_idle_keepalive_connections_do_not_keep_the_last_request
    with_server(APP, lint: false, keepalive_timeout: 60) do |port, server|
      sockets = Array.new(CONNECTIONS) do
        socket = connect(port)
        socket.write(REQUEST)
        assert_equal 200, read_response(socket)[0]
        socket
      end
      assert_equal CONNECTIONS, server.connection_count
      GC.start
      GC.start
      retained = ObjectSpace.each_object(String).count { |s| s.bytesize == MARK.bytesize && s == MARK }
      assert_operator retained, :<, CONNECTIONS / 10, "header values of finished requests still held"
    ensure
      sockets&.each(&:close)
    end
  end
end
