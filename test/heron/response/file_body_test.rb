# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "rack/files"
require "net/http"
require_relative "../../support/tls_certificates"

# Bodies that name their file (`to_path`) go out with Content-Length through IO.copy_stream.
class FileBodyTest < Minitest::Test
  # A body whose bytes can only come from its file: iterating it fails the test.
  class PathOnlyBody
    def initialize(path) = @path = path
    def to_path = @path
    def each = raise("the body was iterated instead of sent from its file")
  end

  def setup
    @dir = Dir.mktmpdir("heron-files")
    @data = Random.new(14).bytes(3 * 1024 * 1024 + 17)
    File.binwrite(File.join(@dir, "data.bin"), @data)
  end

  def teardown
    FileUtils.rm_rf(@dir)
  end

  def test_file_goes_out_with_its_length_and_the_connection_stays_usable
    path = File.join(@dir, "data.bin")
    with_server(->(_env) { [200, { "content-type" => "application/octet-stream" }, PathOnlyBody.new(path)] }, lint: false) do |port|
      socket = connect(port)
      2.times do
        socket.write("GET /data.bin HTTP/1.1\r\nHost: x\r\n\r\n")
        status, headers, body = Timeout.timeout(ProcessHelper::PATIENCE) { read_response(socket) }
        assert_equal [200, @data.bytesize.to_s, nil], [status, headers["content-length"], headers["transfer-encoding"]]
        assert body == @data, "the file's bytes, intact"
      end
      socket.write("HEAD /data.bin HTTP/1.1\r\nHost: x\r\n\r\n")
      _status, headers, = read_response(socket, head: true)
      assert_equal @data.bytesize.to_s, headers["content-length"], "HEAD announces the file's length"
    end
  end

  # Rack::Files' 206 body names the whole file; its content-range says which bytes to send.
  def path_only(app)
    lambda do |env|
      status, headers, body = app.call(env)
      [status, headers, body.respond_to?(:to_path) ? PathOnlyBody.new(body.to_path) : body]
    end
  end

  def test_rack_files_range_sends_exactly_the_range
    with_server(path_only(Rack::Files.new(@dir)), lint: false) do |port|
      socket = connect(port)
      socket.write("GET /data.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=1000-1999\r\n\r\n")
      status, headers, body = Timeout.timeout(ProcessHelper::PATIENCE) { read_response(socket) }
      assert_equal [206, "1000", "bytes 1000-1999/#{@data.bytesize}"], [status, headers["content-length"], headers["content-range"]]
      assert_equal @data.byteslice(1000, 1000), body
      socket.write("GET /data.bin HTTP/1.1\r\nHost: x\r\n\r\n")
      status, headers, body = Timeout.timeout(ProcessHelper::PATIENCE) { read_response(socket) }
      assert_equal [200, @data.bytesize], [status, body.bytesize]
      assert_nil headers["transfer-encoding"]
    end
  end

  # Rack::Files answers one range with a body that has no to_path (so that servers unaware of
  # ranges iterate it, 8 KiB reads through Ruby strings); it is sent from its file at the
  # range's offset instead. Its `each` is made to fail, so only the file can supply the bytes.
  def test_rack_files_single_range_body_is_sent_from_its_file
    files = Rack::Files.new(@dir)
    app = lambda do |env|
      status, headers, body = files.call(env)
      body.define_singleton_method(:each) { |*| raise "the range body was iterated instead of sent from its file" }
      [status, headers, body]
    end
    with_server(app, lint: false) do |port|
      socket = connect(port)
      socket.write("GET /data.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=70000-3145727\r\n\r\n")
      status, headers, body = Timeout.timeout(ProcessHelper::PATIENCE) { read_response(socket) }
      assert_equal [206, "3075728", "bytes 70000-3145727/#{@data.bytesize}"], [status, headers["content-length"], headers["content-range"]]
      assert body == @data.byteslice(70_000, 3_075_728), "the range's bytes, intact"
    end
  end

  # A client that stops reading is dropped after write_timeout, and the reactor serves others
  # meanwhile (the copy waits through the fiber scheduler, not in the thread).
  def test_a_stalled_reader_is_dropped_and_does_not_hold_up_the_reactor
    files = path_only(Rack::Files.new(@dir))
    File.binwrite(File.join(@dir, "big.bin"), "x" * (64 * 1024 * 1024))
    app = ->(env) { env["PATH_INFO"] == "/ping" ? [200, {}, ["pong"]] : files.call(env) }
    with_server(app, lint: false, write_timeout: 0.5, threads: 1) do |port|
      stalled = connect(port)
      stalled.write("GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
      assert_equal [200, "pong"], Net::HTTP.get_response(URI("http://127.0.0.1:#{port}/ping")).then { |r| [r.code.to_i, r.body] }
      Timeout.timeout(ProcessHelper::PATIENCE) { sleep 0.05 until server_log.include?("GET /big.bin") }
      received = read_to_eof(stalled)
      assert_operator received.bytesize, :<, 64 * 1024 * 1024, "the download was cut off"
      head, body = received.split("\r\n\r\n", 2)
      assert_match(/content-length: #{64 * 1024 * 1024}\r\n/, head)
      assert_operator body.to_s.bytesize, :>, 0, "part of the file went out before the client stalled"
    end
  end

  # Over TLS the socket is an OpenSSL one: IO.copy_stream writes through it (no sendfile), still
  # without iterating the body.
  def test_file_over_tls
    paths = TLSCertificates.make(@dir, "localhost")
    query = URI.encode_www_form([["cert", paths["localhost"][0]], ["key", paths["localhost"][1]]])
    with_server(path_only(Rack::Files.new(@dir)), lint: false, binds: ["ssl://127.0.0.1:0?#{query}"], environment: "production") do |port|
      http = Net::HTTP.new("localhost", port)
      http.ipaddr = "127.0.0.1"
      http.use_ssl = true
      http.ca_file = paths["ca"]
      response = http.start { |session| session.get("/data.bin") }
      assert_equal ["200", @data.bytesize.to_s], [response.code, response["content-length"]]
      assert response.body == @data, "the file's bytes, intact, over TLS"
    end
  end

  private

  def read_to_eof(socket)
    received = String.new
    Timeout.timeout(20) do
      loop { received << socket.readpartial(65_536) }
    rescue EOFError, Errno::ECONNRESET
      received
    end
  end
end
