# frozen_string_literal: true

require "heron/http_parser"

# Shared helpers for the Heron::HTTPParser unit tests: feed raw bytes, no server.
module ParserHelper
  # Parses raw in one call; returns [env, head_length, parser].
  def parse(raw, **limits)
    parser = Heron::HTTPParser.new(**limits)
    env = {}
    n = parser.parse(env, raw.b)
    [env, n, parser]
  end

  # Feeds raw one byte more at a time (same growing buffer); returns [env, n, parser].
  def parse_bytewise(raw, **limits)
    parser = Heron::HTTPParser.new(**limits)
    env = {}
    buf = +"".b
    n = nil
    raw.b.each_char do |c|
      buf << c
      n = parser.parse(env, buf)
      break if n
    end
    [env, n, parser]
  end

  # Asserts the head parses whole: the length returned is the head's, up to its blank line.
  # @return [Hash] the env.
  def assert_parses(raw, **limits)
    env, n, = parse(raw, **limits)
    assert_equal raw.b.index("\r\n\r\n") + 4, n, "parse did not return the head's length"
    env
  end

  # Asserts parsing raw raises klass (optionally with a message matching pattern).
  def assert_rejected(klass, raw, pattern = nil, **limits)
    error = assert_raises(klass) { parse(raw, **limits) }
    assert_match(pattern, error.message) if pattern
    error
  end

  def assert_bad(raw, pattern = nil, **limits)
    error = assert_rejected(Heron::HTTPParser::BadRequest, raw, pattern, **limits)
    assert_equal 400, error.status
  end

  # A request head with the given extra field lines.
  def head(*fields, line: "GET / HTTP/1.1")
    "#{line}\r\n#{fields.map { |f| "#{f}\r\n" }.join}\r\n"
  end

  def get(*fields, line: "GET / HTTP/1.1")
    head("Host: x", *fields, line: line)
  end
end
