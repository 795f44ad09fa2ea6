# frozen_string_literal: true

require "test_helper"
require "heron/trusted_proxies"

class TrustedProxiesTest < Minitest::Test
  def setup
    @proxies = Heron::TrustedProxies.new(["10.0.0.0/8", "::1", "192.168.1.7"])
  end

  def test_an_untrusted_peer_is_the_client_whatever_its_headers_say
    assert_equal "203.0.113.9", @proxies.client_address("203.0.113.9", "1.2.3.4", "for=5.6.7.8")
  end

  def test_the_rightmost_untrusted_hop_is_the_client
    assert_equal "198.51.100.2", @proxies.client_address("10.0.0.1", "6.6.6.6, 198.51.100.2, 10.1.2.3")
    assert_equal "198.51.100.2", @proxies.client_address("::1", "198.51.100.2:5000")
  end

  def test_all_trusted_hops_give_the_leftmost_and_no_header_gives_the_peer
    assert_equal "10.9.9.9", @proxies.client_address("10.0.0.1", "10.9.9.9, 192.168.1.7")
    assert_equal "10.0.0.1", @proxies.client_address("10.0.0.1", nil, nil)
    assert_equal "10.0.0.1", @proxies.client_address("10.0.0.1", "")
  end

  def test_a_hop_that_is_not_an_address_stops_the_walk_at_the_trusted_hop_to_its_right
    assert_equal "10.2.2.2", @proxies.client_address("10.0.0.1", "6.6.6.6, unknown, 10.2.2.2")
    assert_equal "10.0.0.1", @proxies.client_address("10.0.0.1", "6.6.6.6, garbage")
  end

  def test_forwarded_is_read_when_x_forwarded_for_is_absent
    header = 'for=6.6.6.6, for="[2001:db8::7]:4711";proto=https, for=10.3.3.3'
    assert_equal "2001:db8::7", @proxies.client_address("10.0.0.1", nil, header)
    assert_equal "10.0.0.1", @proxies.client_address("10.0.0.1", nil, "for=_hidden")
    assert_equal "1.1.1.1", @proxies.client_address("10.0.0.1", "1.1.1.1", "for=2.2.2.2")
  end

  def test_ipv4_mapped_ipv6_peers_match_ipv4_ranges_and_bad_entries_are_rejected
    assert @proxies.include?("::ffff:10.1.1.1")
    refute @proxies.include?("11.0.0.1")
    refute @proxies.include?("not an ip")
    refute Heron::TrustedProxies.new([]).include?("10.0.0.1")
    assert Heron::TrustedProxies.valid?("172.16.0.0/12")
    refute Heron::TrustedProxies.valid?("10.0.0.0/99")
    error = assert_raises(Heron::ConfigError) { Heron::Configuration.new(trusted_proxies: "10.0.0.0/8, nope") }
    assert_equal 'trusted_proxies must be a list of IP addresses or CIDRs like 10.0.0.0/8 (got "nope")', error.message
    assert_equal ["10.0.0.0/8", "::1"], Heron::Configuration.new(trusted_proxies: "10.0.0.0/8,::1").trusted_proxies
  end
end
