# frozen_string_literal: true

require "test_helper"
require "net/http"
require "digest"
require "tmpdir"
require_relative "../../support/tls_certificates"

# rack.input streams from the socket while the app runs.
class InputTest < Minitest::Test
  # Past prebuffer_body bytes (64 KiB by default; 5 here) the app runs while the rest arrives.
  def test_app_runs_before_the_body_has_arrived
    seen = Queue.new
    app = lambda do |env|
      seen << :called
      first = env["rack.input"].read(5)
      rest = env["rack.input"].read
      [200, { "content-type" => "text/plain" }, ["#{first}|#{rest}"]]
    end
    with_server(app, prebuffer_body: 5) do |port|
      socket = connect(port)
      socket.write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhello")
      assert_equal :called, Timeout.timeout(ProcessHelper::PATIENCE) { seen.pop }, "app is called before the body is complete"
      socket.write("world")
      assert_equal "hello|world", read_response(socket)[2]
    end
  end

  # The input of a bodiless request is shared by the connection's bodiless requests, frozen:
  # every read gives the end of the body without changing it.
  def test_an_empty_body_reads_the_same_when_frozen
    input = Heron::Request::Input.new(nil, nil, 0, Heron::Configuration.new).freeze
    buffer = +"old"
    assert_equal ["", nil, nil, nil, []], [input.read, input.read(4), input.read(4, buffer), input.gets, input.to_enum(:each).to_a]
    assert_equal "", buffer
    assert input.finished? && input.discard(10)
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

  # read() of a Content-Length body fills one String sized for the rest of the body; what gets and
  # read(n) left over comes first, and a body that arrives in pieces after the head is whole.
  def test_read_n_gets_and_read_whatever_the_framing
    app = lambda do |env|
      input = env["rack.input"]
      parts = [input.read(4), input.gets, input.read(3), input.read]
      [200, { "content-type" => "text/plain" }, [parts.inspect + input.read.inspect + input.read(1).inspect]]
    end
    body = "head line\n#{'x' * 100_000}tail"
    with_server(app) do |port|
      chunked = body.scan(/.{1,7000}/m).map { |piece| "#{piece.bytesize.to_s(16)}\r\n#{piece}\r\n" }.join + "0\r\n\r\n"
      [["Content-Length: #{body.bytesize}", body], ["Transfer-Encoding: chunked", chunked]].each do |framing, payload|
        socket = connect(port)
        socket.write("POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n#{framing}\r\n\r\n#{payload[0, 6]}")
        payload[6..].scan(/.{1,30000}/m).each { |piece| socket.write(piece) }
        expected = ["head", " line\n", "xxx", "#{'x' * 99_997}tail"].inspect + %(""nil)
        assert_equal expected, read_response(socket)[2], framing
      ensure
        socket&.close
      end
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

  # A chunked body read with read(n, buffer) as the client sends it in small pieces, split inside
  # chunk-size lines, extensions and CRLFs, the last piece carrying the next (pipelined) request:
  # every read returns the caller's buffer with at most n bytes, and the next request is answered.
  def test_chunked_body_sent_in_split_pieces_reads_into_a_buffer_and_keeps_the_pipelined_request
    body = Array.new(40_000) { |i| (i % 253).chr }.join.b
    app = lambda do |env|
      input = env["rack.input"]
      buffer = +""
      out = +"".b
      ok = true
      while (got = input.read(1000, buffer))
        ok &&= got.equal?(buffer) && buffer.bytesize.between?(1, 1000)
        out << buffer
      end
      [200, { "content-type" => "text/plain" }, ["#{out.bytesize} #{out == body || env['PATH_INFO']} #{ok}"]]
    end
    with_server(app) do |port|
      chunked = body.scan(/.{1,3000}/m).map { |piece| "#{piece.bytesize.to_s(16)};n=v\r\n#{piece}\r\n" }.join + "0\r\n\r\n"
      socket = connect(port)
      socket.write("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
      pieces = chunked.scan(/.{1,997}/m)
      pieces[-1] += "POST /next HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n"
      pieces.each_with_index do |piece, i|
        socket.write(piece)
        sleep 0.001 if (i % 10).zero? # let the server read some pieces alone
      end
      assert_equal "40000 true true", read_response(socket)[2]
      assert_equal "1 /next true", read_response(socket)[2]
    ensure
      socket&.close
    end
  end

  # The buffer path and read() read the socket themselves, so they must cope with what a TLS
  # socket answers too.
  def test_uploads_over_tls_read_into_a_buffer_and_not
    app = lambda do |env|
      input = env["rack.input"]
      out = +""
      if env["PATH_INFO"] == "/buffer"
        buffer = String.new
        out << buffer while input.read(10_000, buffer)
      elsif env["PATH_INFO"] == "/whole"
        out << input.read
      else
        while (piece = input.read(7_000)) do out << piece end
      end
      [200, { "content-type" => "text/plain" }, [Digest::SHA256.hexdigest(out)]]
    end
    Dir.mktmpdir do |dir|
      paths = TLSCertificates.make(dir, "localhost")
      bind = "ssl://127.0.0.1:0?#{URI.encode_www_form(cert: paths['localhost'][0], key: paths['localhost'][1])}"
      with_server(app, binds: [bind]) do |port|
        body = Random.new(1).bytes(300_000)
        http = Net::HTTP.new("localhost", port)
        http.ipaddr = "127.0.0.1"
        http.use_ssl = true
        http.ca_file = paths["ca"]
        http.start do |client|
          %w[/buffer /plain /whole].each do |path|
            post = Net::HTTP::Post.new(path, "content-type" => "application/octet-stream")
            post.body = body
            assert_equal Digest::SHA256.hexdigest(body), client.request(post).body, "#{path} with Content-Length"
            post = Net::HTTP::Post.new(path, "content-type" => "application/octet-stream", "transfer-encoding" => "chunked")
            post.body_stream = StringIO.new(body)
            assert_equal Digest::SHA256.hexdigest(body), client.request(post).body, "#{path} chunked"
          end
        end
      end
    end
  end

  # read(n, buffer) reads the socket itself; the minimum body rate must still apply to it.
  def test_minimum_body_rate_applies_to_reads_into_a_buffer
    app = lambda do |env|
      buffer = String.new
      total = 0
      total += buffer.bytesize while env["rack.input"].read(1024, buffer)
      [200, { "content-type" => "text/plain" }, [total.to_s]]
    end
    with_server(app, min_body_rate: 1000, body_rate_grace: 0.5, body_timeout: 30) do |port|
      ["Content-Length: 100000\r\n\r\nabc", "Transfer-Encoding: chunked\r\n\r\n186a0\r\nabc"].each do |framing|
        socket = connect(port)
        socket.write("POST / HTTP/1.1\r\nHost: x\r\n#{framing}")
        assert_match(/\AHTTP\/1.1 408 /, read_all(socket, timeout: 10), "#{framing}: cut by the rate, not after the 30 s body_timeout")
      ensure
        socket&.close
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
