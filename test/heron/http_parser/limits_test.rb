# frozen_string_literal: true

require "test_helper"
require_relative "parser_helper"

class HeronParserLimitsTest < Minitest::Test
  include ParserHelper

  def target_of(size)
    "/#{'a' * (size - 1)}"
  end

  def test_target_at_the_limit_and_one_over
    env, = parse(get(line: "GET #{target_of(64)} HTTP/1.1"), max_target_bytes: 64)
    assert_equal 64, env["PATH_INFO"].bytesize
    error = assert_rejected(Heron::HTTPParser::URITooLong, get(line: "GET #{target_of(65)} HTTP/1.1"),
                            max_target_bytes: 64)
    assert_equal 414, error.status
  end

  def test_target_too_long_detected_before_the_line_ends
    parser = Heron::HTTPParser.new(max_target_bytes: 64)
    assert_nil parser.parse({}, "GET #{target_of(64)}")
    assert_raises(Heron::HTTPParser::URITooLong) { parser.parse({}, "GET #{target_of(65)}") }
  end

  def test_default_target_limit_is_8192
    assert_equal 8192, assert_parses(get(line: "GET #{target_of(8192)} HTTP/1.1"))["PATH_INFO"].bytesize
    assert_rejected(Heron::HTTPParser::URITooLong, get(line: "GET #{target_of(8193)} HTTP/1.1"))
  end

  def test_header_section_at_the_limit_and_one_over
    fields = ["Host: x", "X-Pad: #{'p' * 40}"]
    section = fields.sum { |f| f.bytesize + 2 } + 2
    _, n, = parse(head(*fields), max_header_bytes: section)
    assert_equal head(*fields).bytesize, n
    error = assert_rejected(Heron::HTTPParser::HeaderFieldsTooLarge, head(*fields), /header section too large/,
                            max_header_bytes: section - 1)
    assert_equal 431, error.status
  end

  def test_header_limit_does_not_count_the_request_line
    line = "GET #{target_of(500)} HTTP/1.1"
    assert_equal "x", assert_parses(head("Host: x", line: line), max_header_bytes: 11)["HTTP_HOST"]
  end

  def test_header_section_too_large_detected_without_terminator
    parser = Heron::HTTPParser.new(max_header_bytes: 100)
    buf = +"GET / HTTP/1.1\r\nX-A: #{'a' * 95}"
    assert_nil parser.parse({}, buf)
    buf << "a"
    assert_raises(Heron::HTTPParser::HeaderFieldsTooLarge) { parser.parse({}, buf) }
  end

  def test_pipelined_bytes_after_the_head_do_not_count
    request = get
    env = assert_parses(request + ("x" * 1000), max_header_bytes: request.bytesize - 16)
    assert_equal "x", env["HTTP_HOST"]
  end

  def test_field_count_at_the_limit_and_one_over
    fields = ["Host: x"] + (1..4).map { |i| "X-#{i}: #{i}" }
    env, = parse(head(*fields), max_header_fields: 5)
    assert_equal "4", env["HTTP_X_4"]
    error = assert_rejected(Heron::HTTPParser::HeaderFieldsTooLarge, head(*fields, "X-5: 5"), /too many header fields/,
                            max_header_fields: 5)
    assert_equal 431, error.status
  end

  def test_default_field_limit_is_100
    fields = ["Host: x"] + (1..99).map { |i| "X-#{i}: #{i}" }
    assert_equal "99", assert_parses(head(*fields))["HTTP_X_99"]
    assert_rejected(Heron::HTTPParser::HeaderFieldsTooLarge, head(*fields, "X-100: 1"))
  end

  def test_field_table_starts_small_and_grows_to_the_limit_keeping_every_field
    require "objspace"
    parser = Heron::HTTPParser.new
    assert_operator ObjectSpace.memsize_of(parser), :<, 1024, "an idle parser holds no 100-field table"
    fields = ["Host: x"] + (1..99).map { |i| "X-#{i}: v#{i}" }
    request = head(*fields)
    env = {}
    buf = +"".b
    request.each_char { |c| break if parser.parse(env, buf << c) } # resumed across every growth
    assert_equal (1..99).map { |i| "v#{i}" }, (1..99).map { |i| env["HTTP_X_#{i}"] }
    parser.reset
    second = {}
    parser.parse(second, head("Host: y", "X-1: again").b)
    assert_equal %w[y again], [second["HTTP_HOST"], second["HTTP_X_1"]]
  end

  def test_errors_are_sticky
    parser = Heron::HTTPParser.new
    buf = +"GET / HTTP/1.1\r\nX : y\r\n"
    assert_raises(Heron::HTTPParser::BadRequest) { parser.parse({}, buf) }
    assert_raises(Heron::HTTPParser::BadRequest) { parser.parse({}, buf + "\r\n") }
  end

  def test_invalid_limits_and_arguments
    assert_raises(ArgumentError) { Heron::HTTPParser.new(max_target_bytes: 0) }
    assert_raises(ArgumentError) { Heron::HTTPParser.new(max_header_fields: -1) }
    assert_raises(ArgumentError) { Heron::HTTPParser.new(bogus: 1) }
    parser = Heron::HTTPParser.new
    assert_nil parser.parse({}, +"GET / HTTP/1.1\r\n")
    assert_raises(ArgumentError) { parser.parse({}, +"GET") }
    assert_raises(TypeError) { parser.parse([], +"GET") }
  end

  def test_error_hierarchy
    klasses = [Heron::HTTPParser::BadRequest, Heron::HTTPParser::URITooLong,
               Heron::HTTPParser::HeaderFieldsTooLarge, Heron::HTTPParser::NotImplemented,
               Heron::HTTPParser::VersionNotSupported]
    assert_equal [400, 414, 431, 501, 505], klasses.map { |k| k.new("m").status }
    klasses.each { |k| assert_operator k, :<, Heron::HTTPParser::Error }
    assert_operator Heron::HTTPParser::Error, :<, StandardError
  end
end
