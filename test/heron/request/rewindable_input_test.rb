# frozen_string_literal: true

require "test_helper"
require "open3"

# With `rewindable_input true`, rack.input can rewind: what the app read is kept in memory up to
# `body_spool_threshold`, then in an unlinked Tempfile that is closed once the request is done.
# Rack 3's Lint hides #rewind (Rack 3 dropped it), so these apps run without Lint.
class RewindableInputTest < Minitest::Test
  REPORT = lambda do |env|
    input = env["rack.input"]
    first = input.read(5)
    input.rewind
    line = input.gets
    chunks = []
    input.each { |chunk| chunks << chunk }
    input.rewind
    all = input.read
    summary = [first, line, chunks.join.bytesize, all.bytesize, all.encoding, input.read, input.read(1), input.spooled?]
    [200, { "content-type" => "text/plain" }, [summary.inspect]]
  end

  def test_small_body_rewinds_from_memory
    with_server(REPORT, lint: false, rewindable_input: true, body_spool_threshold: 1024) do |port|
      response = post(port, "hello\nworld", chunked: false)
      assert response.end_with?(%(["hello", "hello\\n", 5, 11, #<Encoding:ASCII-8BIT>, "", nil, false])), response
    end
  end

  def test_large_chunked_body_is_spooled_to_a_file_and_the_file_is_closed_after_the_request
    body = "line one\n#{'x' * 20_000}"
    with_server(REPORT, lint: false, rewindable_input: true, body_spool_threshold: 1024) do |port|
      response = post(port, body, chunked: true)
      assert response.end_with?(%(["line ", "line one\\n", 20000, 20009, #<Encoding:ASCII-8BIT>, "", nil, true])), response
      assert_equal [], eventually { (open = spool_files).empty? && open }, "no spool file left open"
    end
  end

  def test_after_reply_callbacks_can_still_read_the_body
    seen = Queue.new
    app = lambda do |env|
      input = env["rack.input"]
      input.read
      env["rack.after_reply"] << -> { input.rewind && seen << [input.read.bytesize, spool_files.size] }
      [200, { "content-type" => "text/plain" }, ["ok"]]
    end
    with_server(app, lint: false, rewindable_input: true, body_spool_threshold: 100) do |port|
      post(port, "y" * 5000, chunked: false)
      assert_equal [5000, 1], Timeout.timeout(ProcessHelper::PATIENCE) { seen.pop }
      assert_equal [], eventually { (open = spool_files).empty? && open }
    end
  end

  def test_partly_read_body_is_discarded_and_the_connection_kept_alive
    app = lambda do |env|
      input = env["rack.input"]
      input.read(3)
      input.rewind
      [200, { "content-type" => "text/plain" }, [input.read(4).to_s]]
    end
    with_server(app, lint: false, rewindable_input: true, body_spool_threshold: 2) do |port|
      socket = connect(port)
      socket.write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789")
      assert_equal [200, "0123"], read_response(socket).values_at(0, 2)
      socket.write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd")
      assert_equal [200, "abcd"], read_response(socket).values_at(0, 2)
    ensure
      socket&.close
    end
  end

  def test_limit_still_applies_after_a_rewind
    app = lambda do |env|
      input = env["rack.input"]
      input.read(500)
      input.rewind
      [200, { "content-type" => "text/plain" }, [input.read.bytesize.to_s]]
    end
    with_server(app, lint: false, rewindable_input: true, body_spool_threshold: 10, max_body_size: 1000) do |port|
      assert_match(/\AHTTP\/1.1 413 /, post(port, "z" * 2000, chunked: true))
    end
  end

  def test_http2_requests_get_a_rewindable_input_too
    app = lambda do |env|
      input = env["rack.input"]
      first = input.read(5)
      input.rewind
      [200, { "content-type" => "text/plain" }, ["#{first}|#{input.read.bytesize}|#{input.spooled?}"]]
    end
    with_server(app, lint: false, rewindable_input: true, body_spool_threshold: 1024) do |port|
      out, status = Open3.capture2e("curl", "-sS", "--http2-prior-knowledge", "--data-binary", "@-",
                                    "http://127.0.0.1:#{port}/", stdin_data: "hello#{'h' * 300_000}")
      assert status.success?, out
      assert_equal "hello|300005|true", out
      assert_equal [], eventually { (open = spool_files).empty? && open }
    end
  end

  # A body that arrives a little at a time, as from a slow client: at most 1 KiB per read.
  class Trickle
    def initialize(size) = @left = size

    def read_part(length, buffer)
      return nil if @left.zero?
      piece = [length, 1024, @left].min
      @left -= piece
      buffer.replace("x" * piece)
    end
  end

  # read(16 KiB) of a body arriving in pieces hands the app 16 KiB Strings made of many parts:
  # the GC pacer must be told of all of it (one minor GC per 4 MiB), or the garbage piles up
  # (a 100 MiB upload read twice raised the server's peak RSS by 45 MiB on a busy machine).
  def test_a_body_arriving_in_pieces_is_counted_whole_by_the_gc_pacer
    input = Heron::Request::RewindableInput.new(Trickle.new(8 * 1024 * 1024), threshold: 1024 * 1024)
    GC.disable # only the pacer's collections count
    before = GC.count
    read = 0
    while (piece = input.read(16 * 1024))
      read += piece.bytesize
    end
    assert_equal 8 * 1024 * 1024, read
    assert_operator GC.count - before, :>=, 2, "minor GCs run by the pacer for 8 MiB handed out"
  ensure
    GC.enable
    input&.close
  end

  private

  def post(port, body, chunked:)
    framing = chunked ? "Transfer-Encoding: chunked" : "Content-Length: #{body.bytesize}"
    payload = chunked ? body.scan(/.{1,700}/m).map { |piece| "#{piece.bytesize.to_s(16)}\r\n#{piece}\r\n" }.join + "0\r\n\r\n" : body
    raw_request(port, "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n#{framing}\r\n\r\n#{payload}")
  end

  # @return [Array<String>] this process's open descriptors on (deleted) heron-body spool files.
  def spool_files
    Dir.glob("/proc/self/fd/*").filter_map { |fd| File.readlink(fd) rescue nil }.grep(/heron-body/)
  end
end
