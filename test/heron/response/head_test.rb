# frozen_string_literal: true

require "test_helper"
require "heron/response/head"

class HeadTest < Minitest::Test
  def build(headers, extra = "content-length: 0\r\n")
    Heron::Response::Head.build(200, headers, extra)
  end

  def test_status_line_fields_extra_and_blank_line
    head = build({ "content-type" => "text/plain", "x-count" => 3 })
    assert_equal "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nx-count: 3\r\ncontent-length: 0\r\n\r\n", head
    assert_equal Encoding::BINARY, head.encoding
  end

  # build_into writes the same head into a reused buffer, emptied first, growing it as needed;
  # an invalid field raises with the buffer left usable.
  def test_build_into_reuses_one_buffer
    buffer = String.new(capacity: 16, encoding: Encoding::BINARY) << "stale bytes of the last head"
    headers = { "content-type" => "text/plain", "x-long" => "v" * 600 }
    head = Heron::Response::Head.build_into(buffer, 200, headers, "content-length: 0\r\n", "", "")
    assert_same buffer, head
    assert_equal build(headers), head
    short = Heron::Response::Head.build_into(buffer, 404, {}, "", "", "connection: close\r\n")
    assert_equal "HTTP/1.1 404 Not Found\r\nconnection: close\r\n\r\n", short
    assert_raises(Heron::Response::Invalid) { Heron::Response::Head.build_into(buffer, 200, { "bad name" => "x" }, "", "", "") }
    assert_equal build({}), Heron::Response::Head.build_into(buffer, 200, {}, "content-length: 0\r\n", "", "")
  end

  def test_array_values_give_one_line_each
    head = build({ "set-cookie" => %w[a=1 b=2] })
    assert_includes head, "set-cookie: a=1\r\nset-cookie: b=2\r\n"
  end

  def test_framing_and_hijack_fields_are_left_to_the_server
    head = build({ "connection" => "close", "transfer-encoding" => "chunked", "rack.hijack" => proc {}, "x-a" => "1" })
    assert_equal "HTTP/1.1 200 OK\r\nx-a: 1\r\ncontent-length: 0\r\n\r\n", head
  end

  def test_invalid_names_are_refused
    ["bad name", "", "x:y", "x\r\ny", "x\0", "caf\u00e9", :symbol].each do |name|
      error = assert_raises(Heron::Response::Invalid) { build({ name => "v" }) }
      assert_match(/invalid header name/, error.message)
    end
  end

  def test_carriage_return_and_nul_in_values_are_refused_naming_the_header
    { "a\r\nx-injected: 1" => /carriage return/, "a\rb" => /carriage return/, "a\0b" => /NUL/,
      ["ok", "b\r"] => /carriage return/ }.each do |value, reason|
      error = assert_raises(Heron::Response::Invalid) { build({ "x-a" => value }) }
      assert_match(/"x-a"/, error.message)
      assert_match(reason, error.message)
    end
  end

  def test_rack2_newline_joined_values_give_one_line_each
    head = build({ "set-cookie" => "a=1\nb=2", "x-list" => ["c\nd", "e"] })
    assert_includes head, "set-cookie: a=1\r\nset-cookie: b=2\r\n"
    assert_includes head, "x-list: c\r\nx-list: d\r\nx-list: e\r\n"
  end

  def test_fields_are_the_lines_as_pairs_by_the_same_rules
    fields = Heron::Response::Head.fields({ "set-cookie" => "a=1\nb=2", "x-list" => %w[c d], "connection" => "close", "rack.x" => "1", "x-n" => 3 })
    assert_equal [%w[set-cookie a=1], %w[set-cookie b=2], %w[x-list c], %w[x-list d], %w[x-n 3]], fields
    error = assert_raises(Heron::Response::Invalid) { Heron::Response::Head.fields({ "x-a" => "b\0" }) }
    assert_match(/"x-a" contains a NUL/, error.message)
  end

  def test_names_starting_with_rack_are_not_fields
    assert_equal "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n", build({ "rack.protocol" => "websocket" })
  end

  def test_normalize_keeps_a_lower_case_hash_as_it_is
    headers = { "content-type" => "text/plain" }
    assert_same headers, Heron::Response::Head.normalize(headers)
  end

  def test_normalize_lower_cases_names_and_merges_spellings
    headers = { "Content-Type" => "text/plain", "Set-Cookie" => "a=1", "set-cookie" => %w[b=2 c=3], "X-Y" => "1" }
    assert_equal({ "content-type" => "text/plain", "set-cookie" => %w[a=1 b=2 c=3], "x-y" => "1" },
                 Heron::Response::Head.normalize(headers))
  end

  def test_normalize_refuses_two_spellings_of_content_length
    error = assert_raises(Heron::Response::Invalid) do
      Heron::Response::Head.normalize({ "Content-Length" => "1", "content-length" => "100" })
    end
    assert_match(/content-length/i, error.message)
  end

  def test_headers_that_are_not_a_hash_are_converted
    assert_includes build([%w[x-a 1]]), "x-a: 1\r\n"
  end

  def test_assemble_writes_status_line_fields_server_lines_and_blank_line_in_one_string
    head = Heron::Response::Head.assemble("HTTP/1.1 404 Not Found\r\n".b, { "x-a" => "1" }, "content-length: 3\r\n",
                                          "date: D\r\n", "connection: close\r\n")
    assert_equal "HTTP/1.1 404 Not Found\r\nx-a: 1\r\ncontent-length: 3\r\ndate: D\r\nconnection: close\r\n\r\n", head
    assert_equal Encoding::BINARY, head.encoding
    refute_predicate head, :frozen?
  end

  def test_assemble_grows_past_its_first_512_bytes
    headers = Array.new(40) { |i| ["x-field-#{i}", "v" * 30] }.to_h
    head = Heron::Response::Head.assemble("HTTP/1.1 200 OK\r\n".b, headers, "", "", "")
    assert_equal headers.sum { |name, value| name.bytesize + value.bytesize + 4 } + 19, head.bytesize
    assert head.end_with?("x-field-39: #{'v' * 30}\r\n\r\n")
  end

  def test_append_parts_adds_the_bytes_of_every_part_whatever_its_encoding
    head = Heron::Response::Head.build(200, {}, "")
    parts = ["caf\u00e9", "\xFF".b, "!"]
    assert_same head, Heron::Response::Head.append_parts(head, parts)
    assert_equal "HTTP/1.1 200 OK\r\n\r\ncaf\u00e9\xFF!".b, head
    assert_equal Encoding::BINARY, head.encoding
    assert_equal 7, Heron::Response::Head.bytesize_of(parts)
  end

  def test_parts_that_are_not_strings_are_refused
    assert_raises(TypeError) { Heron::Response::Head.append_parts(+"".b, ["a", 1]) }
    assert_raises(TypeError) { Heron::Response::Head.bytesize_of(["a", nil]) }
  end
end
