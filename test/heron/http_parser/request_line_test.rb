# frozen_string_literal: true

require "test_helper"
require_relative "parser_helper"

class HeronParserRequestLineTest < Minitest::Test
  include ParserHelper

  SIMPLE = "GET /a/b%20c?x=1&y=2 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n"

  def test_simple_get_fills_env_exactly
    env, n, parser = parse(SIMPLE)
    assert_equal SIMPLE.bytesize, n
    expected = {
      "REQUEST_METHOD" => "GET", "REQUEST_URI" => "/a/b%20c?x=1&y=2", "PATH_INFO" => "/a/b%20c",
      "QUERY_STRING" => "x=1&y=2", "SERVER_PROTOCOL" => "HTTP/1.1",
      "HTTP_HOST" => "example.com", "HTTP_ACCEPT" => "*/*"
    }
    assert_equal expected, env
    assert_equal 1, parser.http_minor
    assert_nil parser.content_length
    refute parser.chunked?
  end

  def test_env_values_are_binary_strings
    env, = parse(SIMPLE)
    env.each_value { |v| assert_equal Encoding::ASCII_8BIT, v.encoding }
    assert env["REQUEST_METHOD"].frozen?
    assert_same env["REQUEST_METHOD"], parse(SIMPLE).first["REQUEST_METHOD"]
    refute env["PATH_INFO"].frozen?
  end

  def test_byte_by_byte_gives_the_same_result
    assert_equal parse(SIMPLE)[0..1], parse_bytewise(SIMPLE)[0..1]
  end

  def test_incomplete_returns_nil_and_env_untouched
    parser = Heron::HTTPParser.new
    env = {}
    assert_nil parser.parse(env, +"GET / HTTP/1.1\r\nHost: x\r\n")
    assert_empty env
    assert_nil parser.keepalive? ? 1 : nil
  end

  def test_pipelined_buffer_returns_head_length
    second = "GET /2 HTTP/1.1\r\nHost: x\r\n\r\n"
    env, n, = parse(SIMPLE + second)
    assert_equal SIMPLE.bytesize, n
    assert_equal "/a/b%20c", env["PATH_INFO"]
  end

  def test_complete_parse_is_idempotent_and_reset_reads_the_next_request
    parser = Heron::HTTPParser.new
    buf = +"#{SIMPLE}POST /p HTTP/1.0\r\nContent-Length: 0\r\n\r\n"
    assert_equal SIMPLE.bytesize, parser.parse({}, buf)
    assert_equal SIMPLE.bytesize, parser.parse({}, buf)
    parser.reset
    env = {}
    rest = buf.byteslice(SIMPLE.bytesize..)
    assert_equal rest.bytesize, parser.parse(env, rest)
    assert_equal ["POST", "HTTP/1.0", "0"], env.values_at("REQUEST_METHOD", "SERVER_PROTOCOL", "CONTENT_LENGTH")
    assert_equal 0, parser.content_length
  end

  def test_no_query_gives_empty_query_string
    env, = parse(get.sub("GET /", "GET /x"))
    assert_equal ["/x", ""], env.values_at("PATH_INFO", "QUERY_STRING")
    env, = parse(get.sub("GET /", "GET /x?"))
    assert_equal ["/x", ""], env.values_at("PATH_INFO", "QUERY_STRING")
  end

  def test_other_token_methods_are_passed_through
    env, = parse(head("Host: x", line: "PROPFIND / HTTP/1.1"))
    assert_equal "PROPFIND", env["REQUEST_METHOD"]
  end

  def test_method_must_be_a_token
    assert_bad(head("Host: x", line: "G(T / HTTP/1.1"), /method/)
    assert_bad(head("Host: x", line: "\x00GET / HTTP/1.1"), /method/)
    assert_bad(head("Host: x", line: "#{'A' * 33} / HTTP/1.1"), /method too long/)
  end

  def test_extra_spaces_in_request_line
    assert_bad(head("Host: x", line: "GET  / HTTP/1.1"), /extra space/)
    assert_bad(head("Host: x", line: "GET /  HTTP/1.1"), /extra space/)
    assert_bad(head("Host: x", line: "GET / HTTP/1.1 "))
    assert_bad(head("Host: x", line: " GET / HTTP/1.1"))
  end

  def test_fragment_and_ctl_in_target
    assert_bad(head("Host: x", line: "GET /a#b HTTP/1.1"), /fragment/)
    assert_bad(head("Host: x", line: "GET /a\x00b HTTP/1.1"), /invalid character in request target/)
    assert_bad(head("Host: x", line: "GET /a\tb HTTP/1.1"))
    assert_bad(head("Host: x", line: "GET /\x7f HTTP/1.1"))
  end

  def test_bare_line_endings_in_request_line
    assert_bad("GET / HTTP/1.1\nHost: x\r\n\r\n")
    assert_bad("GET / HTTP/1.1\rHost: x\r\n\r\n", /bare CR/)
    assert_bad("GET /\n", /missing HTTP version/)
  end

  def test_absolute_form
    env, = parse(get(line: "GET http://h.example:8080/p/q?x=y HTTP/1.1").sub("Host: x", "Host: other"))
    assert_equal ["/p/q", "x=y", "h.example:8080", "http://h.example:8080/p/q?x=y"],
                 env.values_at("PATH_INFO", "QUERY_STRING", "HTTP_HOST", "REQUEST_URI")
    env, = parse(head("Host: h", line: "GET HTTPS://h HTTP/1.1"))
    assert_equal ["/", "", "h"], env.values_at("PATH_INFO", "QUERY_STRING", "HTTP_HOST")
    env, = parse(head("Host: h", line: "OPTIONS http://h HTTP/1.1"))
    assert_equal "*", env["PATH_INFO"]
  end

  def test_bad_absolute_forms
    assert_bad(head("Host: h", line: "GET ftp://h/ HTTP/1.1"), /scheme/)
    assert_bad(head("Host: h", line: "GET http://u:p@h/ HTTP/1.1"), /userinfo/)
    assert_bad(head("Host: h", line: "GET http:///p HTTP/1.1"), /authority/)
    assert_bad(head("Host: h", line: "GET h.example:443 HTTP/1.1"), /invalid request target/)
  end

  def test_asterisk_form_only_for_options
    env, = parse(head("Host: x", line: "OPTIONS * HTTP/1.1"))
    assert_equal ["*", "", "*"], env.values_at("PATH_INFO", "QUERY_STRING", "REQUEST_URI")
    assert_bad(head("Host: x", line: "GET * HTTP/1.1"), /OPTIONS/)
  end

  def test_connect_is_not_implemented
    error = assert_rejected(Heron::HTTPParser::NotImplemented, head("Host: h:443", line: "CONNECT h:443 HTTP/1.1"))
    assert_equal 501, error.status
  end

  def test_unsupported_versions_are_505
    ["HTTP/2.0", "HTTP/0.9", "HTTP/3.0", "HTTP/0.1"].each do |v|
      error = assert_rejected(Heron::HTTPParser::VersionNotSupported, head("Host: x", line: "GET / #{v}"))
      assert_equal 505, error.status
    end
  end

  # RFC 9112 §2.3: a recipient of a higher minor version of HTTP/1 answers as 1.1.
  def test_higher_http1_minor_versions_are_read_as_1_1
    %w[HTTP/1.2 HTTP/1.9].each do |v|
      env, _n, parser = parse(head("Host: x", line: "GET / #{v}"))
      assert_equal 1, parser.http_minor, v
      assert_equal "HTTP/1.1", env["SERVER_PROTOCOL"], v
      assert parser.keepalive?, v
    end
  end

  def test_raw_utf8_in_the_target_passes_through_as_sent
    line = "GET /caf\xC3\xA9/\xF0\x9F\x90\xA6\xEF\xBF\xBF?q=\xE2\x9C\x93\xF4\x8F\xBF\xBF HTTP/1.1".b
    env, = parse(head("Host: x", line: line))
    assert_equal ["/caf\xC3\xA9/\xF0\x9F\x90\xA6\xEF\xBF\xBF".b, "q=\xE2\x9C\x93\xF4\x8F\xBF\xBF".b], env.values_at("PATH_INFO", "QUERY_STRING")
    assert_equal Encoding::ASCII_8BIT, env["PATH_INFO"].encoding
    assert_equal env, parse_bytewise(head("Host: x", line: line)).first
  end

  # RFC 3629: overlong forms (C0 AF is '/'), surrogates, code points past U+10FFFF, lone
  # continuation bytes, truncated sequences and bytes that never occur are not UTF-8.
  INVALID_UTF8 = {
    "overlong /" => "\xC0\xAF", "overlong C1" => "\xC1\xBF", "overlong 3-byte" => "\xE0\x80\xAF",
    "overlong 4-byte" => "\xF0\x80\x80\xAF", "surrogate" => "\xED\xA0\x80", "low surrogate" => "\xED\xBF\xBF",
    "past U+10FFFF" => "\xF4\x90\x80\x80", "F5" => "\xF5\x80\x80\x80", "FF" => "\xFF", "FE" => "\xFE",
    "lone continuation" => "\x80", "truncated 2-byte" => "\xC3", "truncated 3-byte" => "\xE2\x9C",
    "truncated 4-byte" => "\xF0\x9F\x90", "bad continuation" => "\xC3\x28"
  }.freeze

  def test_invalid_utf8_in_the_target_is_400
    INVALID_UTF8.each do |_name, bytes|
      ["/a#{bytes}", "/a#{bytes}/b", "/a?q=#{bytes}", "http://x/#{bytes}"].each do |target|
        assert_bad(head("Host: x", line: "GET #{target} HTTP/1.1".b), /invalid UTF-8 in request target/)
      end
    end
  end

  def test_malformed_versions_are_400
    ["http/1.1", "HTTP/1.10", "HTTP/1", "HTTP/1.x", "HTTP/11", "HTTPS/1.1", "HTTP/1.1x"].each do |v|
      assert_bad(head("Host: x", line: "GET / #{v}"))
    end
  end

  def test_leading_empty_lines_are_skipped_but_bounded
    env, n, = parse("\r\n\r\n#{get}")
    assert_equal get.bytesize + 4, n
    assert_equal "GET", env["REQUEST_METHOD"]
    parse("\r\n" * 8 + get)
    assert_bad("\r\n" * 9 + get, /empty lines/)
    assert_bad("\n#{get}")
  end

  def test_env_passes_rack_lint
    env, = parse(get("Content-Type: text/plain", "Content-Length: 0", line: "POST /p?q=1 HTTP/1.1"))
    env.merge!("SCRIPT_NAME" => "", "SERVER_NAME" => "x", "SERVER_PORT" => "80", "rack.url_scheme" => "http",
               "rack.input" => StringIO.new("".b), "rack.errors" => $stderr)
    app = Rack::Lint.new(->(_env) { [200, {}, []] })
    assert_equal 200, app.call(env).first
  end
end
