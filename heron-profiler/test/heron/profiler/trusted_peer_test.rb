# frozen_string_literal: true

require "test_helper"
require "heron/profiler"

# Whose X-Request-Start the profiler believes: under Heron what its env builder decided from the
# socket's peer, under any other server REMOTE_ADDR matched against trusted_proxies.
class ProfilerTrustedPeerTest < Minitest::Test
  def test_herons_mark_or_else_remote_addr
    peer = Heron::Profiler::TrustedPeer.new(["127.0.0.1", "10.0.0.0/8"])
    assert peer.trusted?("heron.request_start" => 1.0, "heron.trusted_proxy" => true, "REMOTE_ADDR" => "203.0.113.9")
    refute peer.trusted?("heron.request_start" => 1.0, "REMOTE_ADDR" => "127.0.0.1"), "Heron's env: only the mark counts"
    assert peer.trusted?("REMOTE_ADDR" => "127.0.0.1"), "another server's env: REMOTE_ADDR is its peer"
    assert peer.trusted?("REMOTE_ADDR" => "::ffff:10.1.2.3"), "IPv4-mapped IPv6 is IPv4"
    refute peer.trusted?("REMOTE_ADDR" => "203.0.113.9")
    refute peer.trusted?("REMOTE_ADDR" => "::1")
    refute peer.trusted?("REMOTE_ADDR" => "garbage")
    refute peer.trusted?({})
    assert Heron::Profiler::TrustedPeer.new([]).empty?
  end

  # The keys are the contract with Heron's env builders: the same strings on both sides.
  def test_the_env_keys_are_herons
    require "heron/trusted_proxies"
    assert_equal [Heron::TrustedProxies::PEER_KEY, Heron::TrustedProxies::UNIX_PEER_KEY],
                 [Heron::Profiler::TrustedPeer::PEER_KEY, Heron::Profiler::TrustedPeer::UNIX_PEER_KEY]
  end
end
