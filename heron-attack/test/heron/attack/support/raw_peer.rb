# frozen_string_literal: true

# For tests that need a peer misbehaving in ways no real server will: one connection of a raw TCP
# server, served by a block in a thread.
module RawPeer
  # Accepts one connection in a thread and runs the block with it; afterwards reads until the
  # client goes away, then closes. A socket error (the client left) ends it quietly.
  # @param server [TCPServer]
  # @yieldparam socket [TCPSocket]
  # @return [Thread] kill it in the test's ensure.
  def raw_peer(server)
    Thread.new do
      socket = server.accept
      yield socket
      socket.read
    rescue IOError, SystemCallError
      nil
    ensure
      socket&.close
    end
  end
end
