# frozen_string_literal: true

require "json"
require "tmpdir"
require "rbconfig"

# Drives a server with the core's own {LoadDriver} (open loop, a new connection per request) in a
# child process while a test restarts it, and checks that every request sent got a 200 answer.
# (The core's tests run without heron-attack installed.)
module LoadHelper
  DRIVER = File.expand_path("load_driver.rb", __dir__)

  # Starts the load driver against a port, its per-answer lines going to a file that
  # {#wait_for_answers} reads.
  # @return [Array(Integer, String, Integer)] the driver's pid, its JSON report path, requests planned.
  def start_load(port, rate: 40, seconds: 6)
    json = File.join(Dir.mktmpdir("heron-load"), "report.json")
    pid = Process.spawn(RbConfig.ruby, DRIVER, "http://127.0.0.1:#{port}/", rate.to_s, seconds.to_s, json, lines_path(json),
                        out: File::NULL, err: File::NULL)
    [pid, json, rate * seconds]
  end

  # Waits until the load has had `count` answers: the load is under way (a handshake, where a
  # fixed sleep could end before a slow machine has started the attack).
  # @return [void]
  def wait_for_answers(load, count: 3)
    eventually { File.exist?(lines_path(load[1])) && File.readlines(lines_path(load[1])).size >= count }
  end

  # Waits for the attack and asserts that every planned request was sent and answered 200.
  # @return [Hash] the JSON report.
  def assert_every_request_answered(load)
    pid, json, planned = load
    status = wait_exit(pid)
    assert status&.success?, "the load driver did not finish"
    report = JSON.parse(File.read(json))
    requests = report["requests"]
    assert_equal planned, requests["sent"], "requests sent"
    assert_equal({ "200" => planned }, report["status_codes"],
                 "every request answered 200; errors: #{report['errors']} #{report['error_samples']}")
    report
  end

  private

  def lines_path(json) = File.join(File.dirname(json), "requests.txt")
end

Minitest::Test.include(LoadHelper)
