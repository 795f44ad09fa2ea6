# frozen_string_literal: true

require "json"
require "tmpdir"
require "rbconfig"

# Drives a server with `heron attack` (open loop, a new connection per request) in a child
# process while a test restarts it, and checks that every request sent got a 2xx answer.
module LoadHelper
  # Starts `heron attack` against a port.
  # @return [Array(Integer, String, Integer)] the attack's pid, its JSON report path, requests planned.
  def start_load(port, rate: 40, seconds: 6)
    json = File.join(Dir.mktmpdir("heron-load"), "report.json")
    pid = Process.spawn(RbConfig.ruby, File.join(ProcessHelper::ROOT, "exe/heron"), "attack",
                        "http://127.0.0.1:#{port}/", "--rate", rate.to_s, "--duration", seconds.to_s,
                        "--no-keepalive", "--timeout", "20", "--json", json, out: File::NULL, err: File::NULL)
    [pid, json, rate * seconds]
  end

  # Waits for the attack and asserts that every planned request was sent and answered 200.
  # @return [Hash] the JSON report.
  def assert_every_request_answered(load)
    pid, json, planned = load
    status = wait_exit(pid, timeout: 60)
    assert status&.success?, "heron attack did not finish"
    report = JSON.parse(File.read(json))
    requests = report["requests"]
    assert_equal planned, requests["sent"], "requests sent"
    assert_equal({ "200" => planned }, report["status_codes"],
                 "every request answered 200; errors: #{report['errors']} #{report['error_samples']}")
    report
  end
end

Minitest::Test.include(LoadHelper)
