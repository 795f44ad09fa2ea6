# frozen_string_literal: true

require "test_helper"
require_relative "parser_helper"

class HeronParserIncrementalTest < Minitest::Test
  include ParserHelper

  REQUEST = "\r\nPOST http://h.example:81/p?q=1 HTTP/1.1\r\nHost: ignored\r\nCookie: a=1\r\n" \
            "X-Empty:\r\nCookie: b=2\r\nContent-Length: 3\r\nX-Obs: caf\xC3\xA9 \t\r\n\r\nabc".b

  def test_every_two_way_split_gives_the_same_env
    expected = parse(REQUEST)
    (0..REQUEST.bytesize).each do |i|
      parser = Heron::HTTPParser.new
      env = {}
      first = parser.parse(env, REQUEST.byteslice(0, i))
      n = first || parser.parse(env, REQUEST.dup)
      assert_equal [expected[0], expected[1]], [env, n], "split at #{i}"
      assert_equal 3, parser.content_length
    end
  end

  def test_byte_by_byte_matches_one_call
    env, n, parser = parse_bytewise(REQUEST)
    assert_equal parse(REQUEST)[0..1], [env, n]
    assert parser.keepalive?
  end

  def test_errors_are_raised_before_the_line_ends
    {
      "G\x00" => /method/, "GET  " => /extra space/, "GET /#" => /fragment/, "GET / HTTP/1.1 " => /extra space/,
      "GET / HTTP/2.0\r" => /not supported/, "GET / HTTX" => /malformed/,
      "GET / HTTP/1.1\r\nX " => /colon/, "GET / HTTP/1.1\r\n " => /folding/,
      "GET / HTTP/1.1\r\nX: a\x01" => /header value/, "GET / HTTP/1.1\r\nX: a\rb" => /bare CR/
    }.each do |partial, pattern|
      error = assert_raises(Heron::HTTPParser::Error, partial.inspect) { Heron::HTTPParser.new.parse({}, partial.b) }
      assert_match pattern, error.message, partial.inspect
    end
  end

  def test_field_errors_wait_for_the_whole_value
    parser = Heron::HTTPParser.new
    assert_nil parser.parse({}, +"GET / HTTP/1.1\r\nContent-Length: 1")
    assert_raises(Heron::HTTPParser::BadRequest) { parser.parse({}, +"GET / HTTP/1.1\r\nContent-Length: 1x\r\n") }
  end

  def test_buffer_may_be_a_different_string_with_the_same_prefix
    parser = Heron::HTTPParser.new
    head = get
    assert_nil parser.parse({}, head[0, 10].dup)
    env = {}
    assert_equal head.bytesize, parser.parse(env, "#{head}tail")
    assert_equal "x", env["HTTP_HOST"]
  end
end
