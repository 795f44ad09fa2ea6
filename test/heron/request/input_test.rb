# frozen_string_literal: true

require "test_helper"

# rack.input streams from the socket while the app runs.
class InputTest < Minitest::Test
  def test_app_runs_before_the_body_has_arrived
    seen = Queue.new
    app = lambda do |env|
      seen << :called
      first = env["rack.input"].read(5)
      rest = env["rack.input"].read
      [200, { "content-type" => "text/plain" }, ["#{first}|#{rest}"]]
    end
    with_server(app) do |port|
      socket = connect(port)
      socket.write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhello")
      assert_equal :called, Timeout.timeout(3) { seen.pop }, "app is called before the body is complete"
      socket.write("world")
      assert_equal "hello|world", read_response(socket)[2]
    end
  end

  def test_gets_and_each_over_chunked_body
    app = lambda do |env|
      input = env["rack.input"]
      line = input.gets
      chunks = []
      input.each { |chunk| chunks << chunk }
      [200, { "content-type" => "text/plain" }, ["#{line.inspect} #{chunks.join.inspect} #{input.read(1).inspect}"]]
    end
    with_server(app) do |port|
      body = "3\r\nab\n\r\n4\r\ncdef\r\n0\r\nX-Trailer: 1\r\n\r\n"
      response = raw_request(port, "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n#{body}")
      assert response.end_with?(%("ab\\n" "cdef" nil)), response
    end
  end

  def test_read_into_buffer_and_read_zero
    app = lambda do |env|
      buffer = +"old"
      env["rack.input"].read(3, buffer)
      zero = env["rack.input"].read(0)
      eof = env["rack.input"].read(3, +"x")
      [200, { "content-type" => "text/plain" }, ["#{buffer}|#{zero.inspect}|#{eof.inspect}"]]
    end
    with_server(app) do |port|
      response = raw_request(port, "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 3\r\n\r\nabc")
      assert response.end_with?(%(abc|""|nil)), response
    end
  end

  # read(n, buffer) takes the allocation-free path (straight from the socket, or decoded in
  # place); every way of splitting the reads must give the same bytes, framing or not.
  def test_reads_into_a_buffer_give_the_body_whatever_the_sizes
    body = Array.new(3000) { |i| (i % 251).chr }.join.b * 7
    app = lambda do |env|
      input = env["rack.input"]
      buffer = +"stale"
      out = input.read(3).dup
      sizes = [1, 7, 4096, 50_000, 13]
      index = 0
      while input.read(sizes[(index += 1) % sizes.size], buffer)
        out << buffer
      end
      [200, { "content-type" => "text/plain" }, ["#{buffer.inspect} #{input.read(5, buffer).inspect} #{out == body}"]]
    end
    with_server(app) do |port|
      chunked = body.scan(/.{1,1500}/m).map { |piece| "#{piece.bytesize.to_s(16)};e=1\r\n#{piece}\r\n" }.join
      [["Content-Length: #{body.bytesize}", body], ["Transfer-Encoding: chunked", "#{chunked}0\r\n\r\n"]].each do |framing, payload|
        response = raw_request(port, "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n#{framing}\r\n\r\n#{payload}")
        assert response.end_with?(%("" nil true)), "#{framing}: #{response[-60..].inspect}"
      end
    end
  end

  def test_body_timeout_answers_408
    app = ->(env) { [200, { "content-type" => "text/plain" }, [env["rack.input"].read]] }
    with_server(app, body_timeout: 0.2) do |port|
      socket = connect(port)
      socket.write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
      assert_match(/\AHTTP\/1.1 408 /, read_all(socket))
    end
  end

  def test_client_closing_mid_body_does_not_crash_the_server
    app = ->(env) { [200, { "content-type" => "text/plain" }, [env["rack.input"].read]] }
    with_server(app) do |port|
      socket = connect(port)
      socket.write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
      socket.close
      response = raw_request(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      assert_match(/\AHTTP\/1.1 200 /, response)
    end
  end
end
