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

  def test_array_values_give_one_line_each
    head = build({ "set-cookie" => %w[a=1 b=2] })
    assert_includes head, "set-cookie: a=1\r\nset-cookie: b=2\r\n"
  end

  def test_framing_and_hijack_fields_are_left_to_the_server
    head = build({ "connection" => "close", "transfer-encoding" => "chunked", "rack.hijack" => proc {}, "x-a" => "1" })
    assert_equal "HTTP/1.1 200 OK\r\nx-a: 1\r\ncontent-length: 0\r\n\r\n", head
  end

  def test_invalid_names_are_refused
    ["Content-Type", "bad name", "", "x:y", :symbol].each do |name|
      error = assert_raises(Heron::Response::Invalid) { build({ name => "v" }) }
      assert_match(/invalid header name/, error.message)
    end
  end

  def test_line_breaks_in_values_are_refused
    ["a\r\nx-injected: 1", "a\nb", "a\rb", ["ok", "b\n"]].each do |value|
      error = assert_raises(Heron::Response::Invalid) { build({ "x-a" => value }) }
      assert_match(/x-a.*line break/, error.message)
    end
  end

  def test_headers_that_are_not_a_hash_are_converted
    assert_includes build([%w[x-a 1]]), "x-a: 1\r\n"
  end
end
