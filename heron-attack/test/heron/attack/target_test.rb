# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "heron/attack"

class TargetTest < Minitest::Test
  Target = Heron::Attack::Target

  def test_builds_a_get_request
    bytes = Target.new("get", "http://example.test:8080/a?b=1").to_bytes
    assert_match %r{\AGET /a\?b=1 HTTP/1\.1\r\n}, bytes
    assert_includes bytes, "Host: example.test:8080\r\n"
    assert_includes bytes, "User-Agent: heron-attack/"
    assert bytes.end_with?("\r\n\r\n")
  end

  def test_port_80_host_header_has_no_port
    assert_includes Target.new("GET", "http://example.test/").to_bytes, "Host: example.test\r\n"
  end

  def test_https_urls_are_tls_targets_with_their_own_pool_key
    https = Target.new("GET", "https://example.test/")
    assert_predicate https, :tls?
    assert_includes https.to_bytes, "Host: example.test\r\n" # 443 is https's default port
    assert_equal "https://example.test:443", https.origin
    plain = Target.new("GET", "http://example.test:443/")
    refute_predicate plain, :tls?
    assert_includes plain.to_bytes, "Host: example.test:443\r\n"
    refute_equal https.origin, plain.origin
  end

  def test_body_headers_and_connection_close
    target = Target.new("POST", "http://h/p", headers: ["Host: other", "X-A: 1"], body: "héllo", keepalive: false)
    bytes = target.to_bytes
    refute_includes bytes, "Host: h"
    assert_includes bytes, "X-A: 1\r\nContent-Length: 6\r\nConnection: close\r\n\r\nh\xC3\xA9llo".b
    assert_equal 6, target.body_bytes
    assert_equal "h:80", target.authority
    refute_predicate target, :head?
  end

  def test_head
    assert_predicate Target.new("HEAD", "http://h/"), :head?
  end

  def test_rejects_bad_method_and_urls
    assert_raises(Heron::Attack::UsageError) { Target.new("FETCH", "http://h/") }
    ["ftp://h/", "h/x", "https://", "http://", "http://exa mple/"].each do |url|
      assert_raises(Heron::Attack::UsageError, url) { Target.new("GET", url) }
    end
  end

  def test_weight_defaults_to_one
    assert_equal 1, Target.new("GET", "http://h/").weight
    assert_equal 3, Target.new("GET", "http://h/", weight: 3).weight
  end
end
