# frozen_string_literal: true

require "test_helper"
require "socket"

# `rack.input.read(length)` on a real server returns `length` bytes even when the body arrives in
# pieces: Rack's form parsing (`read(limit + 2)`) and Rails' `raw_post` (`read(content_length)`)
# read a whole body in one call, and a read that returned what had arrived handed them a part.
class FullReadTest < Minitest::Test
  APP = <<~RUBY
    require "rack"
    run lambda { |env|
      input = env["rack.input"]
      text = env["PATH_INFO"] == "/form" ? Rack::Request.new(env).POST.fetch("v").bytesize.to_s : input.read(5_000).bytesize.to_s
      [200, { "content-type" => "text/plain" }, [text]]
    }
  RUBY

  def setup
    @pid, @port, = spawn_heron(APP)
  end

  def teardown
    stop_heron(@pid)
  end

  def test_read_with_a_length_waits_for_that_many_bytes
    assert_equal "5000", post_in_two_parts("/", "a" * 1_000, "b" * 9_000)
  end

  def test_a_form_arriving_in_pieces_is_parsed_whole
    assert_equal "200000", post_in_two_parts("/form", "v=#{'x' * 50_000}", "x" * 150_000)
  end

  private

  # Sends the head, waits for `100 Continue` (written when the app first reads, so the app is
  # then in its read), sends the first part, and the second only if no answer came meanwhile.
  def post_in_two_parts(path, first, second)
    socket = TCPSocket.new("127.0.0.1", @port)
    socket.write("POST #{path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/x-www-form-urlencoded\r\n" \
                 "Content-Length: #{first.bytesize + second.bytesize}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n")
    assert_equal "HTTP/1.1 100 Continue\r\n\r\n", socket.readpartial(25)
    socket.write(first)
    socket.write(second) unless socket.wait_readable(1)
    socket.read.split("\r\n\r\n", 2).last
  ensure
    socket&.close
  end
end
