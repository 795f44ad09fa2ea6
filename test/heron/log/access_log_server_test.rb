# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"

# The access log, request ids and rejected-request lines as the real server writes them.
class HeronAccessLogServerTest < Minitest::Test
  SEEN = ->(env) { [200, { "content-type" => "text/plain" }, ["#{env['HTTP_X_REQUEST_ID']}|#{env['heron.request_id']}"]] }

  def test_a_sane_client_request_id_is_kept_in_env_log_and_response
    with_server(SEEN, log_format: :json) do |port|
      raw = raw_request(port, "GET /a?b=1 HTTP/1.1\r\nHost: t\r\nX-Request-Id: client-42\r\nUser-Agent: probe/1\r\n" \
                              "Referer: http://ref.test/\r\nConnection: close\r\n\r\n")
      assert_equal 1, raw.scan(/^x-request-id: client-42\r$/).size
      assert raw.end_with?("client-42|client-42")
      entry = JSON.parse(wait_for_log_line(/"path":"\/a"/))
      assert_equal ["info", Process.pid, "client-42", "127.0.0.1", "GET", "/a", "b=1", 200, 19, "probe/1", "http://ref.test/"],
                   entry.values_at("level", "pid", "request_id", "remote_addr", "method", "path", "query", "status",
                                   "bytes", "user_agent", "referer")
      assert_kind_of Float, entry["duration_ms"]
    end
  end

  def test_a_missing_or_insane_request_id_is_replaced_and_echoed
    with_server(SEEN) do |port|
      ["", "X-Request-Id: has space\r\n"].each do |header|
        raw = raw_request(port, "GET /b HTTP/1.1\r\nHost: t\r\n#{header}Connection: close\r\n\r\n")
        id = raw[/^x-request-id: (\S+)\r$/, 1]
        assert_match Heron::Log::RequestId::SANE, id
        assert raw.end_with?("#{id}|#{id}")
        assert_includes wait_for_log_line(/request_id=#{Regexp.escape(id)}/), %("GET /b HTTP/1.1" 200)
      end
    end
  end

  def test_http2_requests_get_request_ids_too
    with_server(SEEN) do |port|
      out, = Open3.capture2e("curl", "-s", "-i", "--http2-prior-knowledge", "-H", "X-Request-Id: h2-req-7", "http://127.0.0.1:#{port}/h2")
      assert_match(/^HTTP\/2 200/, out)
      assert_match(/^x-request-id: h2-req-7\r$/, out)
      assert out.end_with?("h2-req-7|h2-req-7")
      assert_includes wait_for_log_line(/request_id=h2-req-7/), "GET /h2"
    end
  end

  def test_the_apps_own_request_id_header_is_not_doubled
    app = ->(env) { [200, { "x-request-id" => "app-#{env['heron.request_id']}" }, ["ok"]] }
    with_server(app) do |port|
      raw = raw_request(port, "GET / HTTP/1.1\r\nHost: t\r\nX-Request-Id: c1\r\nConnection: close\r\n\r\n")
      assert_equal ["app-c1"], raw.scan(/^x-request-id: (\S+)\r$/).flatten
    end
  end

  def test_rejected_requests_are_logged_with_status_reason_and_peer_and_a_flood_is_bounded
    with_server(SEEN, log_format: :json) do |port|
      assert_match(/\AHTTP\/1\.1 400/, raw_request(port, "GET / HTTP/1.1\r\nHost: t\r\nBad Header: x\r\n\r\n"))
      entry = JSON.parse(wait_for_log_line(/rejected request/))
      assert_equal ["warn", 400, "127.0.0.1"], entry.values_at("level", "status", "remote_addr")
      refute_empty entry["reason"]
      40.times { raw_request(port, "GARBAGE\r\n\r\n") }
      lines = server_log.lines.grep(/rejected request/)
      assert_operator lines.size, :<=, 2 * Heron::Log::Logger::REJECTIONS_PER_SECOND, "40 rejections in a few seconds at most"
    end
  end

  def test_log_requests_false_turns_the_access_log_off
    with_server(SEEN, log_requests: false) do |port|
      raw_request(port, "GET /quiet HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
      raw_request(port, "GET / HTTP/1.1\r\nHost: t\r\nBad Header: x\r\n\r\n")
      wait_for_log_line(/rejected request/)
      refute_includes server_log, "/quiet"
    end
  end

  def test_cluster_workers_name_themselves_in_every_line
    pid, port, log = spawn_heron(%(run ->(env) { [200, {}, ["ok"]] }\n), "-w", "2", "--log-format", "json")
    4.times { raw_request(port, "GET /w HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n") }
    lines = eventually { File.read(log).lines.grep(/"path":"\/w"/).then { |found| found.size == 4 && found } }
    workers = lines.map { |line| JSON.parse(line) }.map { |entry| [entry["worker"], entry["pid"]] }
    assert(workers.all? { |index, worker_pid| [0, 1].include?(index) && worker_pid != pid }, workers.inspect)
  ensure
    stop_heron(pid)
  end

  private

  def wait_for_log_line(pattern, timeout: 5)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
    loop do
      line = server_log.lines.find { |text| text.match?(pattern) }
      return line if line
      flunk("no log line matching #{pattern.inspect} in:\n#{server_log}") if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      sleep 0.01
    end
  end
end
