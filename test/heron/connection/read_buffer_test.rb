# frozen_string_literal: true

require "test_helper"
require "objspace"

# Connection::ReadBuffer (C): the read buffer's parsed bytes are dropped in place, and an emptied
# buffer keeps its memory up to the room it is told, so a kept-alive connection reads its next
# head without a malloc and a free per request.
class HeronConnectionReadBufferTest < Minitest::Test
  ReadBuffer = Heron::Connection::ReadBuffer

  def test_dropping_part_moves_the_rest_to_the_front
    buffer = "GET / HTTP/1.1\r\n\r\nGET /next".b
    assert_same buffer, ReadBuffer.drop_front(buffer, 18, 1024)
    assert_equal ["GET /next", Encoding::BINARY], [buffer, buffer.encoding]
    buffer << " HTTP/1.1"
    assert_equal "GET /next HTTP/1.1", buffer
  end

  def test_an_emptied_buffer_keeps_its_memory_up_to_the_room_given
    buffer = String.new(capacity: 800, encoding: Encoding::BINARY) << ("x" * 600)
    held = ObjectSpace.memsize_of(buffer)
    ReadBuffer.drop_front(buffer, 600, 1024)
    assert_equal "", buffer
    assert_equal held, ObjectSpace.memsize_of(buffer), "memory kept for the next request"
    ReadBuffer.drop_front(buffer, 0, 0)
    assert_operator ObjectSpace.memsize_of(buffer), :<, held, "memory given back (a connection that parks)"
  end

  def test_a_buffer_past_the_room_gives_its_memory_back_when_emptied
    buffer = String.new(capacity: 20_000, encoding: Encoding::BINARY) << ("x" * 20_000)
    held = ObjectSpace.memsize_of(buffer)
    ReadBuffer.drop_front(buffer, 30_000, 1024)
    assert_equal "", buffer
    assert_operator ObjectSpace.memsize_of(buffer), :<, held
  end

  def test_a_string_sharing_the_bytes_keeps_them
    buffer = String.new(capacity: 200, encoding: Encoding::BINARY) << ("y" * 100) << ("z" * 100)
    copy = buffer.byteslice(0, 200) # shares the bytes
    ReadBuffer.drop_front(buffer, 100, 1024)
    assert_equal "z" * 100, buffer
    assert_equal "y" * 100 + "z" * 100, copy
  end

  def test_a_negative_count_is_refused
    assert_raises(ArgumentError) { ReadBuffer.drop_front(+"abc", -1, 1024) }
  end
end
