# frozen_string_literal: true

require "test_helper"
require "open3"
require "json"

# Each HTTP/2 stream is a request of its own to everything that watches requests: the access log
# (a line per stream, with its status, bytes and request id), the metrics on the control listener
# and rack.after_reply. A real server process; nghttp (nghttp2-client) sends several streams on
# one connection.
class HeronHTTP2ExchangeTest < Minitest::Test
  STREAMS = 6

  def app(after_reply_log)
    <<~RU
      run lambda { |env|
        id = env["heron.request_id"]
        env["rack.after_reply"] << -> { File.open(#{after_reply_log.inspect}, "a") { |f| f.puts(id + " " + env["SERVER_PROTOCOL"]) } }
        body = "stream " + env["PATH_INFO"] + " " + env["SERVER_PROTOCOL"]
        [env["PATH_INFO"] == "/missing" ? 404 : 200, { "content-type" => "text/plain" }, [body]]
      }
    RU
  end

  def test_access_log_metrics_and_after_reply_see_every_stream
    skip "nghttp is not installed (bin/setup installs nghttp2-client)" unless system("command -v nghttp >/dev/null")
    Dir.mktmpdir do |dir|
      after_reply_log = File.join(dir, "after_reply.log")
      pid, port, log = spawn_heron(app(after_reply_log), "--metrics", "--control-bind", "tcp://127.0.0.1:0")
      out, status = Open3.capture2e("nghttp", "-s", "-m", STREAMS.to_s, "http://127.0.0.1:#{port}/a", "http://127.0.0.1:#{port}/missing")
      assert status.success?, out
      assert_equal STREAMS + STREAMS, out.scan(%r{^\s*\d+\s+\S+\s+\S+\s+\S+\s+(?:200|404)\s+\d+\s+/(?:a|missing)$}).size, out

      lines = eventually { File.read(log).lines.grep(%r{"GET /(a|missing) HTTP/2"}).then { |found| found.size == 2 * STREAMS && found } }
      assert_equal [STREAMS, STREAMS], [lines.grep(%r{"GET /a HTTP/2" 200 16 }).size, lines.grep(%r{"GET /missing HTTP/2" 404 22 }).size], lines.join
      ids = lines.map { |line| line[/request_id=(\S+)/, 1] }
      assert_equal 2 * STREAMS, ids.compact.uniq.size, "a request id per stream"

      after = eventually { File.exist?(after_reply_log) && File.read(after_reply_log).lines.then { |l| l.size == 2 * STREAMS && l } }
      assert_equal ids.sort, after.map { |line| line.split.first }.sort, "after_reply ran once for each stream"
      assert_equal ["HTTP/2"], after.map { |line| line.split.last }.uniq

      metrics = http_get(control_port(log), "/metrics")
      assert_equal STREAMS, metrics[/^heron_requests_total\{status="2xx"\} (\d+)$/, 1].to_i, metrics
      assert_equal STREAMS, metrics[/^heron_requests_total\{status="4xx"\} (\d+)$/, 1].to_i
      assert_equal STREAMS, metrics[/^heron_request_duration_seconds_count\{status="4xx"\} (\d+)$/, 1].to_i
      assert_equal 2 * STREAMS, metrics[/^heron_after_reply_total (\d+)$/, 1].to_i
      assert_equal 1, metrics[/^heron_connections_total (\d+)$/, 1].to_i, "all the streams came on one connection"
    ensure
      stop_heron(pid)
    end
  end

  private

  def control_port(log)
    eventually { File.read(log)[%r{control on tcp://127\.0\.0\.1:(\d+)}, 1] }.to_i
  end

  def http_get(port, path)
    socket = TCPSocket.new("127.0.0.1", port)
    socket.write("GET #{path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
    socket.read.split("\r\n\r\n", 2).last
  ensure
    socket&.close
  end
end
