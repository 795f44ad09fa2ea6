# frozen_string_literal: true

require "socket"

# A port to start a server on when the server cannot be given port 0 (a child process that
# must be told its port, HAProxy, PostgreSQL). Included in every test (test_helper.rb).
module FreePort
  module_function

  # @param host [String]
  # @return [Integer] a port that was free on `host` a moment ago.
  def free_port(host = "127.0.0.1")
    server = TCPServer.new(host, 0)
    server.addr[1]
  ensure
    server&.close
  end
end
