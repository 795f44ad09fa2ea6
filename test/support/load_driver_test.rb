# frozen_string_literal: true

require "test_helper"

# The core's own load driver (what the restart tests drive Heron with): every planned request is
# sent, each answer counted by status, and a refused connection is an error, not an answer; an
# open-ended load stops sending on SIGTERM and still awaits what it sent.
class LoadDriverTest < Minitest::Test
  def test_every_request_is_sent_and_answered_by_a_real_server
    statuses = [200, 200, 503].cycle
    lock = Mutex.new
    app = ->(_env) { [lock.synchronize { statuses.next }, { "content-type" => "text/plain" }, ["ok"]] }
    with_server(app) do |port|
      load = start_load(port, rate: 30, seconds: 1)
      wait_for_answers(load, count: 30)
      status = wait_exit(load[0])
      assert status.success?
      report = JSON.parse(File.read(load[1]))
      assert_equal [30, { "200" => 20, "503" => 10 }, {}], [report["requests"]["sent"], report["status_codes"], report["errors"]]
    end
  end

  def test_an_open_ended_load_stops_sending_when_told_and_reports_what_it_sent
    with_server(->(_env) { [200, { "content-type" => "text/plain" }, ["ok"]] }) do |port|
      load = start_load(port, rate: 50)
      wait_for_answers(load, count: 5)
      stop_load(load, after: 5)
      report = assert_every_request_answered(load)
      sent = report["requests"]["sent"]
      assert_operator sent, :>=, 10
      assert_operator sent, :<, 50 * LoadHelper::OPEN_SECONDS, "stopped long before its bound"
      assert_equal sent, answers(load), "every request sent was awaited and counted"
    end
  end

  def test_a_refused_connection_is_an_error
    port = free_port
    load = start_load(port, rate: 5, seconds: 1)
    assert wait_exit(load[0]).success?
    report = JSON.parse(File.read(load[1]))
    assert_equal [5, {}, { "Errno::ECONNREFUSED" => 5 }], report.values_at("requests", "status_codes", "errors").then { |r, c, e| [r["sent"], c, e] }
    assert_match(/Connection refused/, report["error_samples"].first)
  end
end
