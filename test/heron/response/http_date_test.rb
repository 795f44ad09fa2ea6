# frozen_string_literal: true

require "test_helper"
require "heron/response/http_date"

# The Date value is made once a second, as a value, an HTTP/1.1 line and an HTTP/2 field.
class HeronResponseHTTPDateTest < Minitest::Test
  def test_the_value_line_and_field_agree_and_are_made_once_a_second
    date = Heron::Response::HTTPDate.new
    field = date.field
    field = date.field until field[1].equal?(date.value) # a second may turn between the two reads
    assert_equal ["date", date.value], field
    assert_predicate field, :frozen?
    assert_equal "date: #{field[1]}\r\n", date.line
    assert_match(/\A\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT\z/, field[1])
    same = date.field
    assert_same field, same unless same[1] != field[1] # the same Array within the second
  end
end
