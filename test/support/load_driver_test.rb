# frozen_string_literal: true

require "test_helper"

# The core's own load driver (what the restart tests drive Heron with): every planned request is
# sent, each answer counted by status, and a refused connection is an error, not an answer.
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

  def test_a_refused_connection_is_an_error
    port = free_port
    load = start_load(port, rate: 5, seconds: 1)
    assert wait_exit(load[0]).success?
    report = JSON.parse(File.read(load[1]))
    assert_equal [5, {}, { "Errno::ECONNREFUSED" => 5 }], report.values_at("requests", "status_codes", "errors").then { |r, c, e| [r["sent"], c, e] }
    assert_match(/Connection refused/, report["error_samples"].first)
  end
end
