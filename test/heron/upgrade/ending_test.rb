# frozen_string_literal: true

require "test_helper"

# How an upgraded connection ends: the close deadline, on_close once, and the linger over a
# real TCP connection (half-closed, what the client still sends dropped).
class UpgradeEndingTest < Minitest::Test
  def test_the_close_deadline_and_on_close_once
    ending = Heron::Upgrade::Ending.new
    assert_nil ending.close_by
    ending.close_began
    assert_in_delta Heron::Clock.now + 5, ending.close_by, 1
    assert ending.finish
    refute ending.finish
  end

  def test_a_lingering_socket_is_half_closed_and_what_follows_is_dropped
    server = TCPServer.new("127.0.0.1", 0)
    client = TCPSocket.new("127.0.0.1", server.local_address.ip_port)
    accepted = server.accept
    client.write("late bytes")
    ending = Heron::Upgrade::Ending.new
    ending.linger = true
    ending.drain(accepted, +"")
    assert_nil client.read(1), "the server side was not half-closed"
    refute ending.linger, "it lingers once"
    assert accepted.closed?, "then closed"
  ensure
    [server, client, accepted].each { |io| io&.close }
  end

  def test_without_linger_nothing_is_closed
    ours, theirs = UNIXSocket.pair
    Heron::Upgrade::Ending.new.drain(ours, +"")
    ours.write("still open")
    assert_equal "still open", theirs.readpartial(64)
  ensure
    [ours, theirs].each { |io| io&.close }
  end
end
