# frozen_string_literal: true

require "test_helper"
require_relative "parser_helper"

class HeronParserHeadersTest < Minitest::Test
  include ParserHelper

  def test_field_names_become_http_keys
    env, = parse(get("X-Custom-Thing: 1", "user-agent: ua", "SEC-FETCH-MODE: navigate"))
    assert_equal "1", env["HTTP_X_CUSTOM_THING"]
    assert_equal "ua", env["HTTP_USER_AGENT"]
    assert_equal "navigate", env["HTTP_SEC_FETCH_MODE"]
  end

  def test_keys_are_frozen_and_shared
    env1, = parse(get("Accept: a", "X-Rare: b"))
    env2, = parse(get("Accept: a", "X-Rare: b"))
    key1 = env1.keys.find { |k| k == "HTTP_ACCEPT" }
    key2 = env2.keys.find { |k| k == "HTTP_ACCEPT" }
    assert key1.frozen?
    assert_same key1, key2
    assert env1.keys.find { |k| k == "HTTP_X_RARE" }.frozen?
  end

  def test_common_and_rare_names_map_to_the_right_keys
    names = %w[User-Agent Accept-Encoding Sec-Fetch-Site Sec-Fetch-Mode Sec-Fetch-Dest X-Forwarded-Proto
               X-Request-Id If-None-Match If-Modified-Since Authorization Upgrade-Insecure-Requests Te Dnt
               Sec-WebSocket-Extensions X-Forwarded-Protocol A X-Very-Long-Field-Name-That-Is-Not-Common]
    env, = parse(get(*names.map.with_index { |n, i| "#{n}: v#{i}" }))
    names.each_with_index do |n, i|
      assert_equal "v#{i}", env["HTTP_#{n.upcase.tr('-', '_')}"], n
    end
  end

  def test_content_type_and_length_have_no_http_prefix
    env, = parse(get("Content-Type: text/plain", "Content-Length: 12", line: "POST / HTTP/1.1"))
    assert_equal "text/plain", env["CONTENT_TYPE"]
    assert_equal "12", env["CONTENT_LENGTH"]
    refute env.key?("HTTP_CONTENT_TYPE")
    refute env.key?("HTTP_CONTENT_LENGTH")
  end

  def test_values_are_trimmed_and_keep_inner_whitespace
    env, = parse(get("X-A: \t a  b \t", "X-B:", "X-C:   "))
    assert_equal "a  b", env["HTTP_X_A"]
    assert_equal "", env["HTTP_X_B"]
    assert_equal "", env["HTTP_X_C"]
  end

  def test_obs_text_and_htab_allowed_in_values
    env, = parse(get("X-A: caf\xC3\xA9\tok".b))
    assert_equal "caf\xC3\xA9\tok".b, env["HTTP_X_A"]
  end

  def test_repeated_fields_are_joined
    env, = parse(get("Accept: a", "Accept: b", "Cookie: c=1", "Cookie: d=2", "X-Y: 1", "x-y: 2"))
    assert_equal "a, b", env["HTTP_ACCEPT"]
    assert_equal "c=1; d=2", env["HTTP_COOKIE"]
    assert_equal "1, 2", env["HTTP_X_Y"]
  end

  def test_names_with_underscore_are_dropped
    env, = parse(get("X_Forwarded_For: 6.6.6.6", "X-Forwarded-For: 1.2.3.4", "Content_Length: 5"))
    assert_equal "1.2.3.4", env["HTTP_X_FORWARDED_FOR"]
    refute env.key?("CONTENT_LENGTH")
    env, = parse(get("X_Forwarded_For: 6.6.6.6"))
    refute env.key?("HTTP_X_FORWARDED_FOR")
  end

  def test_obs_fold_is_rejected
    assert_bad(get("X-A: a", " folded"), /folding/)
    assert_bad(get("X-A: a", "\tfolded"), /folding/)
  end

  def test_whitespace_before_colon
    assert_bad(get("X-A : a"), /colon/)
    assert_bad(get("Host\t: a"), /colon/)
  end

  def test_bad_line_endings_in_fields
    assert_bad("GET / HTTP/1.1\r\nHost: x\nX: y\r\n\r\n", /bare LF/)
    assert_bad("GET / HTTP/1.1\r\nHost: x\r\n\n", /bare LF/)
    assert_bad("GET / HTTP/1.1\r\nHost: x\rX: y\r\n\r\n", /bare CR/)
    assert_bad("GET / HTTP/1.1\r\nHost: x\r\n\rX", /bare CR/)
  end

  def test_ctls_in_values
    ["\x00", "\x01", "\x1f", "\x7f", "\v", "\f"].each do |ctl|
      assert_bad(get("X-A: a#{ctl}b"), /invalid character in header value/)
    end
    assert_bad(get("X-A: \x00"))
  end

  def test_invalid_field_names
    assert_bad(get(": empty"), /empty header name/)
    assert_bad(get("X(A): 1"), /invalid character in header name/)
    assert_bad(get("X\x80: 1"), /invalid character in header name/)
    assert_bad(get("X-A"), /header name/)
    assert_bad(get("X@A: 1"))
  end

  def test_host_rules
    assert_bad(head, /missing Host/)
    assert_bad(get("Host: y"), /repeated Host/)
    env, = parse(head(line: "GET / HTTP/1.0"))
    refute env.key?("HTTP_HOST")
    env, = parse(head("Host:"))
    assert_equal "", env["HTTP_HOST"]
  end

  def test_host_value_must_be_an_authority
    ["h", "h.example:8080", "h:", "[::1]:80", "[v1.x]", "1.2.3.4", "a%20b", "x-_~!$&'()*+,;=y"].each do |host|
      env, = parse(head("Host: #{host}"))
      assert_equal host, env["HTTP_HOST"]
    end
    ["a b", "h:8x", "h:1:2", "[::1", "[]", "::1", "u@h", "h/p", "a%2", "a%zz", "h?", "\"h\""].each do |host|
      assert_bad(head("Host: #{host}"), /invalid Host/)
    end
    assert_bad(head("Host: h", line: "GET http://a%/ HTTP/1.1"), /invalid authority/)
  end

  def test_content_length_parsed
    _, _, parser = parse(get("Content-Length: 0042", line: "POST / HTTP/1.1"))
    assert_equal 42, parser.content_length
    _, _, parser = parse(get("Content-Length: 9223372036854775807"))
    assert_equal 9_223_372_036_854_775_807, parser.content_length
  end

  def test_bad_content_lengths
    ["", "-1", "+1", "1.0", "0x10", "1 2", "abc", "5, 5", "5,6"].each do |v|
      assert_bad(get("Content-Length: #{v}"), /Content-Length/)
    end
    assert_bad(get("Content-Length: 9223372036854775808"), /too large/)
    assert_bad(get("Content-Length: 99999999999999999999999"), /too large/)
    assert_bad(get("Content-Length: 5", "Content-Length: 5"), /repeated Content-Length/)
    assert_bad(get("Content-Length: 5", "Content-Length: 6"), /repeated Content-Length/)
  end

  def test_transfer_encoding_chunked
    _, _, parser = parse(get("Transfer-Encoding: chunked", line: "POST / HTTP/1.1"))
    assert parser.chunked?
    assert_nil parser.content_length
    _, _, parser = parse(get("Transfer-Encoding: ChUnKeD"))
    assert parser.chunked?
  end

  def test_transfer_encoding_rules
    assert_bad(get("Transfer-Encoding: chunked", "Content-Length: 3"), /Content-Length with Transfer-Encoding/)
    assert_bad(head("Transfer-Encoding: chunked", line: "POST / HTTP/1.0"), %r{HTTP/1.0})
    assert_bad(get("Transfer-Encoding: gzip"), /not chunked/)
    assert_bad(get("Transfer-Encoding: chunked, gzip"), /not chunked/)
    assert_bad(get("Transfer-Encoding: chunked", "Transfer-Encoding: gzip"), /not chunked/)
    assert_bad(get("Transfer-Encoding: chunked, chunked"), /more than once/)
    assert_bad(get("Transfer-Encoding: chunked", "Transfer-Encoding: chunked"), /more than once/)
    assert_bad(get("Transfer-Encoding:"), /invalid Transfer-Encoding/)
    assert_bad(get("Transfer-Encoding: chunked,"), /invalid Transfer-Encoding/)
    assert_bad(get("Transfer-Encoding: \"chunked\""), /invalid Transfer-Encoding/)
    error = assert_rejected(Heron::HTTPParser::NotImplemented, get("Transfer-Encoding: gzip, chunked"))
    assert_equal 501, error.status
  end

  def test_keepalive
    cases = {
      ["HTTP/1.1", nil] => true, ["HTTP/1.1", "close"] => false, ["HTTP/1.1", "Keep-Alive"] => true,
      ["HTTP/1.1", "Upgrade, CLOSE"] => false, ["HTTP/1.0", nil] => false,
      ["HTTP/1.0", "keep-alive"] => true, ["HTTP/1.0", "close"] => false,
      ["HTTP/1.0", "keep-alive, close"] => false, ["HTTP/1.0", "Upgrade,  Keep-Alive "] => true
    }
    cases.each do |(version, connection), expected|
      fields = ["Host: x", connection && "Connection: #{connection}"].compact
      _, _, parser = parse(head(*fields, line: "GET / #{version}"))
      assert_equal expected, parser.keepalive?, "#{version} Connection: #{connection.inspect}"
      assert_equal version == "HTTP/1.1" ? 1 : 0, parser.http_minor
    end
  end
end
