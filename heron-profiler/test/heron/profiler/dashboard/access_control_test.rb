# frozen_string_literal: true

require "test_helper"
require "heron/profiler/dashboard"

class DashboardAccessControlTest < Minitest::Test
  def test_without_a_token_only_loopback_is_allowed
    access = control(nil)
    %w[127.0.0.1 127.8.9.10 127.255.255.255 ::1 ::ffff:127.0.0.1 ::FFFF:127.0.0.1].each { |address| assert access.allowed?(env(address)), address }
    ["10.0.0.1", "::2", "203.0.113.5", "not-an-address", nil, "", "127.0.0", "127.0.0.1.5", "127.0.0.", "127..0.1",
     "127.0.0.1234", "1270.0.0.1", "127.0.0.1 ", "::1 ", "::ffff:10.0.0.1", "::ffff:", "128.0.0.1"].each do |address|
      refute access.allowed?(env(address)), address.inspect
    end
  end

  # The middleware asks the loopback rule in C, without a Ruby call, when no token is set.
  def test_token_says_whether_the_rule_is_the_token_or_loopback
    refute_predicate control(nil), :token?
    assert_predicate control("s3cret"), :token?
  end

  def test_loopback_through_a_proxy_is_not_local
    access = control(nil)
    refute access.allowed?(env("127.0.0.1", "HTTP_X_FORWARDED_FOR" => "203.0.113.5"))
    refute access.allowed?(env("127.0.0.1", "HTTP_FORWARDED" => "for=203.0.113.5"))
  end

  def test_any_forwarding_header_makes_loopback_not_local
    access = control(nil)
    %w[HTTP_X_REAL_IP HTTP_X_CLIENT_IP HTTP_TRUE_CLIENT_IP HTTP_CF_CONNECTING_IP].each do |name|
      refute access.allowed?(env("127.0.0.1", name => "203.0.113.9")), name
      refute access.allowed?(env("127.0.0.1", name => "")), "#{name}, even empty"
    end
  end

  def test_a_unix_socket_peer_needs_the_token
    unix = { Heron::Profiler::TrustedPeer::UNIX_PEER_KEY => true }
    refute control(nil).allowed?(env("127.0.0.1", unix))
    assert control("s3cret").allowed?(env("127.0.0.1", unix.merge("HTTP_X_HERON_TOKEN" => "s3cret")))
  end

  def test_the_token_from_its_own_header
    access = control("s3cret")
    assert access.allowed?(env("203.0.113.5", "HTTP_X_HERON_TOKEN" => "s3cret"))
    refute access.allowed?(env("203.0.113.5", "HTTP_X_HERON_TOKEN" => "s3cre"))
    refute access.allowed?(env("203.0.113.5", "HTTP_X_HERON_TOKEN" => ""))
  end

  def test_with_a_token_anyone_who_sends_it_is_allowed_and_nobody_else
    access = control("s3cret")
    assert access.allowed?(env("203.0.113.5", "QUERY_STRING" => "token=s3cret"))
    assert access.allowed?(env("203.0.113.5", "HTTP_AUTHORIZATION" => "Bearer s3cret"))
    assert access.allowed?(env("203.0.113.5", "HTTP_AUTHORIZATION" => "bearer  s3cret"))
    refute access.allowed?(env("203.0.113.5", "QUERY_STRING" => "token=wrong"))
    refute access.allowed?(env("203.0.113.5", "HTTP_AUTHORIZATION" => "Basic czNjcmV0"))
    refute access.allowed?(env("127.0.0.1")), "a token is required from loopback too"
  end

  def test_query_token_only_when_it_matches
    access = control("s3cret")
    assert_equal "s3cret", access.query_token(env("::1", "QUERY_STRING" => "a=1&token=s3cret"))
    assert_nil access.query_token(env("::1", "QUERY_STRING" => "token=nope"))
    assert_nil access.query_token(env("::1", "QUERY_STRING" => "token=%zz"))
    assert_nil control(nil).query_token(env("::1", "QUERY_STRING" => "token=s3cret"))
  end

  def test_not_found_is_a_fresh_plain_404
    first = control(nil).not_found
    first[1]["x"] = "changed"
    assert_equal [404, { "content-type" => "text/plain", "content-length" => "10" }, ["Not Found\n"]], control(nil).not_found
  end

  private

  def control(token)
    Heron::Profiler::Dashboard::AccessControl.new(Heron::Configuration.new(profile_token: token))
  end

  def env(address, extra = {})
    { "REMOTE_ADDR" => address, "QUERY_STRING" => "" }.merge(extra)
  end
end
