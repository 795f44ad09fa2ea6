# frozen_string_literal: true

require "test_helper"

# Memory per upload is bounded: reading rack.input in chunks keeps the server's RSS flat whatever
# the body's size, a rewindable input spools to a Tempfile, and the default max_body_size bounds
# what `rack.input.read` (no argument) can hold. Real uploads to a real server process, whose peak
# RSS (VmHWM) is read from /proc.
class BodyMemoryTest < Minitest::Test
  MIB = 1024 * 1024
  UPLOAD = 100 * MIB
  # The point is "does not grow with the body": reading 100 MiB in 16 KiB Strings of garbage
  # showed as 50-80 MiB of growth; reading into a reused buffer shows as 0-1 MiB.
  FLAT = 16 * MIB

  STREAMING_APP = <<~RU
    run lambda { |env|
      input = env["rack.input"]
      passes = env["PATH_INFO"] == "/twice" ? 2 : 1
      total = 0
      passes.times do
        input.rewind if total.positive?
        buffer = String.new
        total += buffer.bytesize while input.read(16 * 1024, buffer)
      end
      [200, { "content-type" => "text/plain" }, [total.to_s]]
    }
  RU

  READ_ALL_APP = <<~RU
    run ->(env) { [200, { "content-type" => "text/plain" }, [env["rack.input"].read.bytesize.to_s]] }
  RU

  def test_reading_in_chunks_keeps_rss_flat_for_a_100_mib_upload
    pid, port, = spawn_heron(STREAMING_APP, "--max-body-size", (2 * UPLOAD).to_s)
    growth = peak_growth(pid, port) { assert_equal [200, UPLOAD.to_s], upload(port, "/", UPLOAD) }
    assert_operator growth, :<, FLAT, "peak RSS grew by #{growth / MIB} MiB for a #{UPLOAD / MIB} MiB body"
  ensure
    stop(pid)
  end

  def test_reading_a_chunked_upload_in_chunks_keeps_rss_flat
    pid, port, = spawn_heron(STREAMING_APP, "--max-body-size", (2 * UPLOAD).to_s)
    growth = peak_growth(pid, port) { assert_equal [200, UPLOAD.to_s], upload(port, "/", UPLOAD, chunked: true) }
    assert_operator growth, :<, FLAT, "peak RSS grew by #{growth / MIB} MiB for a #{UPLOAD / MIB} MiB chunked body"
  ensure
    stop(pid)
  end

  def test_rewindable_input_spools_a_100_mib_upload_to_disk
    pid, port, = spawn_heron(STREAMING_APP, "--max-body-size", (2 * UPLOAD).to_s, "--rewindable-input")
    growth = peak_growth(pid, port) { assert_equal [200, (2 * UPLOAD).to_s], upload(port, "/twice", UPLOAD) }
    assert_operator growth, :<, FLAT, "peak RSS grew by #{growth / MIB} MiB for a #{UPLOAD / MIB} MiB body read twice"
  ensure
    stop(pid)
  end

  def test_default_limit_stops_read_of_an_endless_chunked_upload_at_100_mib
    pid, port, = spawn_heron(READ_ALL_APP)
    status = nil
    growth = peak_growth(pid, port) { status = upload(port, "/", 120 * MIB, chunked: true).first }
    assert_equal 413, status
    assert_operator growth, :<, 200 * MIB, "read() holds at most about max_body_size (grew #{growth / MIB} MiB)"
  ensure
    stop(pid)
  end

  def test_declared_length_over_the_default_limit_is_refused_before_the_app_runs
    pid, port, = spawn_heron(READ_ALL_APP)
    response = raw_request(port, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: #{UPLOAD + 1}\r\n\r\n")
    assert_match(/\AHTTP\/1.1 413 /, response)
    ok = raw_request(port, "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 3\r\n\r\nabc")
    assert_match(/\AHTTP\/1.1 200 /, ok)
  ensure
    stop(pid)
  end

  private

  # @return [Integer] how much the server's peak RSS grew while the block ran (after a warm-up).
  def peak_growth(pid, port)
    2.times { upload(port, "/", MIB) }
    before = vm_hwm(pid)
    yield
    vm_hwm(pid) - before
  end

  def vm_hwm(pid)
    File.read("/proc/#{pid}/status")[/^VmHWM:\s+(\d+) kB/, 1].to_i * 1024
  end

  # Sends `size` bytes (Content-Length or chunked) from a writer thread while reading the answer.
  # @return [Array(Integer, String)] status and body.
  def upload(port, path, size, chunked: false)
    socket = connect(port)
    framing = chunked ? "Transfer-Encoding: chunked" : "Content-Length: #{size}"
    socket.write("POST #{path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n#{framing}\r\n\r\n")
    writer = Thread.new { write_body(socket, size, chunked) }
    status, _headers, body = read_response(socket)
    [status, body]
  ensure
    writer&.join(30)
    socket&.close
  end

  def write_body(socket, size, chunked)
    piece = "b" * MIB
    piece = "#{MIB.to_s(16)}\r\n#{piece}\r\n" if chunked
    (size / MIB).times { socket.write(piece) }
    socket.write("0\r\n\r\n") if chunked
  rescue Errno::EPIPE, Errno::ECONNRESET, IOError
    nil # the server answered (413) and closed before the whole body was sent
  end

  def stop(pid)
    return unless pid
    Process.kill("TERM", pid)
    wait_exit(pid)
  end
end
