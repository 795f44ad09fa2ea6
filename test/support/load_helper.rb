# frozen_string_literal: true

require "json"
require "tmpdir"
require "rbconfig"

# Drives a server with the core's own {LoadDriver} (open loop, a new connection per request) in a
# child process while a test restarts it, and checks that every request sent got a 200 answer.
# (The core's tests run without heron-attack installed.)
module LoadHelper
  DRIVER = File.expand_path("load_driver.rb", __dir__)

  # Seconds an open-ended load (no `seconds:`) sends at most: a bound reached only when the test
  # never stops it with {#stop_load} (a restart that hangs).
  OPEN_SECONDS = 300

  # Starts the load driver against a port, its per-answer lines going to a file that
  # {#wait_for_answers} reads. Without `seconds`, the load sends until {#stop_load}: a restart
  # test stops it once the restart is done, so the load spans the whole restart however long the
  # machine takes, and no longer.
  # @return [Array(Integer, String, Integer, nil)] the driver's pid, its JSON report path, requests
  #   planned (nil for an open-ended load).
  def start_load(port, rate: 40, seconds: nil)
    json = File.join(Dir.mktmpdir("heron-load"), "report.json")
    pid = Process.spawn(RbConfig.ruby, DRIVER, "http://127.0.0.1:#{port}/", rate.to_s, (seconds || OPEN_SECONDS).to_s, json,
                        lines_path(json), out: File::NULL, err: File::NULL, pgroup: true)
    (@spawned_groups ||= []) << pid # killed after the test if it fails before the load ends
    [pid, json, seconds && rate * seconds]
  end

  # Lets a load run on until `after` more requests have been answered (by the server as it is
  # now, e.g. once a restart is done), then stops it sending; the requests already sent are
  # still awaited. Call {#assert_every_request_answered} next.
  # @return [void]
  def stop_load(load, after: 10)
    wait_for_answers(load, count: answers(load) + after)
    Process.kill("TERM", load[0])
  end

  # Waits until the load has had `count` answers: the load is under way (a handshake, where a
  # fixed sleep could end before a slow machine has started the attack).
  # @return [void]
  def wait_for_answers(load, count: 3)
    eventually { answers(load) >= count }
  end

  # Waits for the load to end and asserts that every request was sent (all those planned, for a
  # load of fixed length) and answered 200.
  # @return [Hash] the JSON report.
  def assert_every_request_answered(load)
    pid, json, planned = load
    status = wait_exit(pid)
    assert status&.success?, "the load driver did not finish"
    report = JSON.parse(File.read(json))
    sent = report["requests"]["sent"]
    assert_equal planned, sent, "requests sent" if planned
    assert_equal({ "200" => sent }, report["status_codes"],
                 "every request answered 200; errors: #{report['errors']} #{report['error_samples']}")
    report
  end

  private

  def lines_path(json) = File.join(File.dirname(json), "requests.txt")

  # @return [Integer] how many requests of the load have ended so far.
  def answers(load) = File.exist?(lines_path(load[1])) ? File.readlines(lines_path(load[1])).size : 0
end

Minitest::Test.include(LoadHelper)
