# frozen_string_literal: true

require "test_helper"
require "heron/attack"
require "heron/attack/timed_client"

# What both protocols' clients share, through a small subclass that holds real sockets: the
# timeout around each exchange, resolving, and closing the connections.
class TimedClientTest < Minitest::Test
  # Its exchange opens a real socket to a listener that never answers and waits for a reply.
  class Waiting < Heron::Attack::TimedClient
    attr_reader :sockets

    def initialize(timeout, port)
      super(timeout)
      @port = port
      @sockets = []
    end

    private

    def exchange(_target)
      @sockets << (socket = Socket.tcp("127.0.0.1", @port))
      socket.read(1)
    end

    def close_connections = @sockets.each(&:close)
  end

  def test_an_exchange_past_the_timeout_raises_and_close_closes_its_connections
    server = TCPServer.new("127.0.0.1", 0)
    client = Waiting.new(0.2, server.local_address.ip_port)
    target = Heron::Attack::Target.new("GET", "http://127.0.0.1:#{server.local_address.ip_port}/")
    Sync { assert_raises(Async::TimeoutError) { client.call(target) } }
    client.close
    assert_equal [true], client.sockets.map(&:closed?)
  ensure
    server&.close
  end

  def test_resolve_names_the_target_address_and_refuses_a_bad_name
    client = Waiting.new(1, 1)
    assert_equal "127.0.0.1", client.resolve(Heron::Attack::Target.new("GET", "http://127.0.0.1:9/")).ip_address
    assert_raises(SocketError) { client.resolve(Heron::Attack::Target.new("GET", "http://no-such-host.invalid/")) }
  ensure
    client&.close
  end
end
