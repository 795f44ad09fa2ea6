# frozen_string_literal: true

require "test_helper"
require_relative "parser_helper"

class HeronParserChunkedTest < Minitest::Test
  include ParserHelper

  BODY = "5\r\nhello\r\n6;name=value;q=\"a \\\" b\";flag\r\n world\r\n0\r\nX-Trailer: 1\r\nY: 2\r\n\r\n"
  NEXT = "GET /next HTTP/1.1\r\nHost: x\r\n\r\n"

  # Feeds the pieces one after another (unconsumed bytes stay in buf);
  # returns [decoded, done, leftover].
  def decode(*pieces, parser: Heron::HTTPParser.new)
    dst = +"".b
    buf = +"".b
    done = false
    pieces.each do |piece|
      buf << piece.b
      done = parser.filter_body(dst, buf)
    end
    [dst, done, buf]
  end

  def assert_chunk_error(body, pattern = nil, klass = Heron::HTTPParser::BadRequest)
    error = assert_raises(klass) { decode(body) }
    assert_match(pattern, error.message) if pattern
    error
  end

  def test_decodes_and_leaves_following_bytes
    assert_equal ["hello world", true, NEXT], decode(BODY + NEXT)
  end

  def test_needs_more_input_and_consumes_what_it_got
    dst, done, buf = decode("5\r\nhel")
    assert_equal ["hel", false, ""], [dst, done, buf]
  end

  def test_split_at_every_byte_boundary
    input = BODY + NEXT
    (0..input.bytesize).each do |i|
      result = decode(input.byteslice(0, i), input.byteslice(i..))
      assert_equal ["hello world", true, NEXT], result, "split at #{i}"
    end
  end

  def test_byte_by_byte
    assert_equal ["hello world", true, NEXT], decode(*(BODY + NEXT).b.chars)
  end

  def test_done_is_sticky_until_reset
    parser = Heron::HTTPParser.new
    decode("0\r\n\r\n", parser: parser)
    assert_equal ["", true, "abc"], decode("abc", parser: parser)
    parser.reset
    assert_equal ["abc", false, ""], decode("3\r\nabc", parser: parser)
  end

  def test_large_and_padded_sizes
    data = "x" * 0x1234
    assert_equal [data, true, ""], decode("1234\r\n#{data}\r\n0\r\n\r\n")
    assert_equal ["abc", true, ""], decode("0000000000000003\r\nabc\r\n0\r\n\r\n")
    assert_equal ["abc", true, ""], decode("3\r\nabc\r\n000\r\n\r\n")
  end

  def test_extensions_with_bws_are_ignored
    assert_equal ["abc", true, ""], decode("3 ; a = b ;c;d=\"\"\r\nabc\r\n0;last\r\n\r\n")
    assert_equal ["abc", true, ""], decode("3;a=\"x\\\\y\\\"\"\r\nabc\r\n0\r\n\r\n")
  end

  def test_bad_extensions
    ["3;\r\n", "3;=b\r\n", "3;a=\r\n", "3;a=\"unterminated\r\n", "3;a b\r\n", "3 \r\n",
     "3;a=\"q\"x\r\n", "3;a=b c\r\n", "3;a=\"\x01\"\r\n", "3;a@b\r\n"].each do |line|
      assert_chunk_error(line, /chunk/)
    end
    assert_chunk_error("3;a=#{'b' * 5000}\r\n", /extension too long/)
  end

  def test_bad_sizes
    assert_chunk_error("\r\n", /empty chunk size/)
    assert_chunk_error(" 3\r\nabc", /whitespace before chunk size/)
    assert_chunk_error("\t3\r\nabc", /whitespace/)
    ["g\r\n", "+3\r\n", "-3\r\n", "0x3\r\n", "3x\r\n", "3\n"].each do |line|
      assert_chunk_error(line, /chunk size/)
    end
    assert_chunk_error("00000000000000001\r\n", /too large/)
    assert_chunk_error("8000000000000000\r\n", /too large/)
    assert_chunk_error("3\rX", /bare CR/)
  end

  def test_data_must_end_with_crlf
    assert_chunk_error("3\r\nabcd\r\n", /not followed by CRLF/)
    assert_chunk_error("3\r\nabc\n0\r\n\r\n", /not followed by CRLF/)
    assert_chunk_error("3\r\nabc\rX", /not followed by CRLF/)
  end

  def test_trailers_are_parsed_like_fields
    assert_chunk_error("0\r\n folded\r\n\r\n", /folding/)
    assert_chunk_error("0\r\nX : 1\r\n\r\n", /colon/)
    assert_chunk_error("0\r\n: 1\r\n\r\n", /empty trailer name/)
    assert_chunk_error("0\r\nX: a\x00b\r\n\r\n", /trailer value/)
    assert_chunk_error("0\r\nX: a\nY: b\r\n\r\n", /trailer value/)
    assert_chunk_error("0\r\nX: a\r\r\n", /bare CR/)
    assert_chunk_error("0\r\n\rX", /bare CR/)
  end

  def test_trailer_limits
    parser = Heron::HTTPParser.new(max_header_bytes: 20, max_header_fields: 2)
    assert_equal ["", true, ""], decode("0\r\nA: 1\r\nB: 2\r\n\r\n", parser: parser)
    parser = Heron::HTTPParser.new(max_header_bytes: 20, max_header_fields: 2)
    assert_raises(Heron::HTTPParser::HeaderFieldsTooLarge) { decode("0\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", parser: parser) }
    parser = Heron::HTTPParser.new(max_header_bytes: 16, max_header_fields: 10)
    error = assert_raises(Heron::HTTPParser::HeaderFieldsTooLarge) { decode("0\r\nA: 1234567890123\r\n\r\n", parser: parser) }
    assert_equal 431, error.status
  end

  def test_extension_limit_per_chunk_line_is_configurable
    line = ";a=#{'b' * 97}" # 100 bytes after the size
    parser = Heron::HTTPParser.new(max_chunk_extension_bytes: 100)
    assert_equal ["x", true, ""], decode("1#{line}\r\nx\r\n0\r\n\r\n", parser: parser)
    parser = Heron::HTTPParser.new(max_chunk_extension_bytes: 99)
    error = assert_raises(Heron::HTTPParser::BadRequest) { decode("1#{line}\r\nx\r\n", parser: parser) }
    assert_match(/extension too long/, error.message)
  end

  def test_extension_bytes_are_bounded_per_body
    chunk = "1;a=#{'b' * 97}\r\nx\r\n" # 100 extension bytes each
    parser = Heron::HTTPParser.new(max_total_chunk_extension_bytes: 300)
    assert_equal ["xxx", true, ""], decode(chunk * 3, "0\r\n\r\n", parser: parser)
    parser = Heron::HTTPParser.new(max_total_chunk_extension_bytes: 300)
    error = assert_raises(Heron::HTTPParser::BadRequest) { decode(chunk * 3, "1;z\r\n", parser: parser) }
    assert_equal [400, "too many chunk extension bytes in body"], [error.status, error.message]
  end

  def test_extension_budget_starts_again_for_each_request
    parser = Heron::HTTPParser.new(max_total_chunk_extension_bytes: 300)
    body = "1;a=#{'b' * 97}\r\nx\r\n" * 3 + "0\r\n\r\n"
    assert decode(body, parser: parser)[1]
    parser.reset
    assert decode(body, parser: parser)[1], "a second request on the connection gets its own budget"
  end

  def test_default_extension_limits
    parser = Heron::HTTPParser.new
    assert decode("1;a=#{'b' * 4093}\r\nx\r\n" * 16, "0\r\n\r\n", parser: parser)[1] # 64 KiB in all
    parser = Heron::HTTPParser.new
    assert_raises(Heron::HTTPParser::BadRequest) { decode("1;a=#{'b' * 4093}\r\nx\r\n" * 16, "1;b\r\n", parser: parser) }
    assert_raises(ArgumentError) { Heron::HTTPParser.new(max_total_chunk_extension_bytes: 0) }
  end

  def test_data_appended_to_existing_dst
    parser = Heron::HTTPParser.new
    dst = +"pre-"
    buf = +"2\r\nok\r\n0\r\n\r\n"
    assert parser.filter_body(dst, buf)
    assert_equal "pre-ok", dst
    assert_equal "", buf
  end
end
