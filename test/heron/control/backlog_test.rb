# frozen_string_literal: true

require "test_helper"
require "heron/control/backlog"

class ControlBacklogTest < Minitest::Test
  def test_counts_connections_waiting_to_be_accepted
    server = TCPServer.new("127.0.0.1", 0)
    other = TCPServer.new("127.0.0.1", 0)
    clients = Array.new(3) { TCPSocket.new("127.0.0.1", server.addr[1]) }
    clients << TCPSocket.new("127.0.0.1", other.addr[1])
    assert_equal 3, Heron::Control::Backlog.queued(server)
    assert_equal 4, Heron::Control::Backlog.total([server, other])
    server.accept.close
    assert_equal 2, Heron::Control::Backlog.queued(server)
  ensure
    clients&.each(&:close)
    [server, other].each { |listener| listener&.close }
  end

  def test_unix_listeners_and_no_listeners_are_unknown
    path = File.join(Dir.mktmpdir("heron-backlog"), "s.sock")
    unix = UNIXServer.new(path)
    assert_nil Heron::Control::Backlog.total([unix])
    assert_nil Heron::Control::Backlog.total([])
  ensure
    unix&.close
  end
end
