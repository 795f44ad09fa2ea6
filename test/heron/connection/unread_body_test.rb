# frozen_string_literal: true

require "test_helper"
require "tempfile"

# A body the app never read is discarded after the response; if its chunked framing is broken,
# the connection closes quietly with one log line, and no exception ever leaves a connection task
# (no "unhandled exception" warning from the reactor).
class UnreadBodyTest < Minitest::Test
  # The 61-byte request from issue 12: a chunked body whose first size line is not hex.
  MALFORMED = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzzz\r\n"
  IGNORES_BODY = <<~RU
    run ->(env) { [200, { "content-type" => "text/plain" }, ["ignored the body"]] }
  RU

  def test_malformed_unread_chunked_body_closes_quietly_with_one_log_line_each
    assert_equal 61, MALFORMED.bytesize
    pid, port, log = spawn_heron(IGNORES_BODY)
    3.times do
      socket = connect(port)
      socket.write(MALFORMED)
      status, _headers, body = read_response(socket)
      assert_equal [200, "ignored the body"], [status, body]
      assert closed_by_server?(socket), "the connection must close: the byte stream is unusable"
      socket.close
    end
    assert_match(/\AHTTP\/1.1 200 /, raw_request(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
    output = eventually { (text = File.read(log)).scan("malformed").size == 3 && text }
    refute_match(/unhandled exception|backtrace/i, output)
    assert_equal 3, output.lines.grep(/invalid chunk size/).size, output
  ensure
    Process.kill("KILL", -pid) if pid
    wait_exit(pid) if pid
  end

  # A log destination that fails is one thing that used to escape the connection task.
  class FailingLog
    def write(text)
      raise "log device full" if text.include?("GET")
      text.bytesize
    end

    def sync=(_value); end
  end

  def test_error_escaping_the_request_loop_is_logged_once_and_closes
    errors = StringIO.new
    stderr = capture_stderr do
      with_server(->(_env) { [200, { "content-type" => "text/plain" }, ["ok"]] },
                  log_io: FailingLog.new, error_io: errors) do |port|
        socket = connect(port)
        socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert_equal 200, read_response(socket).first
        assert closed_by_server?(socket)
        socket.close
      end
    end
    assert_equal 1, errors.string.scan("connection closed after an unexpected error").size, errors.string
    assert_includes errors.string, "log device full"
    refute_match(/unhandled exception/i, stderr)
  end

  private

  def capture_stderr
    file = Tempfile.new("stderr")
    saved = $stderr.dup
    $stderr.reopen(file)
    yield
    $stderr.flush
    File.read(file.path)
  ensure
    $stderr.reopen(saved)
    saved.close
    file.close!
  end
end
