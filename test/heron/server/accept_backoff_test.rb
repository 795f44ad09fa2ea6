# frozen_string_literal: true

require "test_helper"
require "net/http"

# A server that runs out of file descriptors keeps accepting once they free up (issue 12, point 1),
# in one process and in a cluster, and says so once per burst of failures, not once per attempt.
class AcceptBackoffTest < Minitest::Test
  APP = <<~RUBY
    run lambda { |env| [200, { "content-type" => "text/plain" }, ["ok"]] }
  RUBY
  FD_LIMIT = 64
  CLIENTS = 200 # well past FD_LIMIT: the rest wait in the listen backlog (2048)

  def test_single_process_accepts_again_once_descriptors_free_up
    pid, port, log = spawn_heron(APP, rlimit_nofile: FD_LIMIT)
    exhaust_then_release(port, log)
    assert_equal 1, File.read(log).scan("accept failed").size, "one line per burst:\n#{File.read(log)}"
  ensure
    stop_heron(pid)
  end

  def test_cluster_workers_accept_again_once_descriptors_free_up
    pid, port, log = spawn_heron(APP, "-w", "2", rlimit_nofile: FD_LIMIT)
    exhaust_then_release(port, log)
    assert_operator File.read(log).scan("accept failed").size, :<=, 2, "one line per worker and burst"
  ensure
    stop_heron(pid)
  end

  def test_logs_a_burst_once_even_when_accepts_succeed_in_between
    out = StringIO.new
    time = 0.0
    backoff = Heron::Server::AcceptBackoff.new(Heron::Log::Logger.new(Heron::Configuration.new(log_io: out, error_io: out)),
                                               quiet: 1.0, clock: -> { time })
    delays = 50.times.map do
      time += 0.1
      backoff.succeeded # at the limit: one accepted, the next fails
      backoff.failed(Errno::EMFILE.new)
    end
    assert_equal [1, 0], [out.string.scan("accept failed").size, out.string.scan("accepting again").size]
    time += 1.5
    backoff.succeeded
    backoff.succeeded
    assert_equal 1, out.string.scan("accepting again after 50 failed accepts").size
    assert_operator delays.max, :<=, 0.1, "never waits long once descriptors are back"
    assert_equal 0, backoff.failures
  end

  private

  def exhaust_then_release(port, log)
    clients = Array.new(CLIENTS) { connect(port) }
    wait_for_failure(log)
    clients.each(&:close)
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    response = Net::HTTP.start("127.0.0.1", port, open_timeout: 5, read_timeout: 5) { |http| http.get("/") }
    elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
    assert_equal "200", response.code
    # The backoff's delay is at most 0.1 s (AcceptBackoffTest's unit test holds it to that); this
    # bound only catches a server that stopped accepting, with room for a loaded machine.
    assert_operator elapsed, :<, 10.0, "answered soon after the release"
  end

  # Gives the server time to run into its limit (on today's main it says nothing when it does).
  def wait_for_failure(log)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + PATIENCE
    sleep 0.05 until File.read(log).include?("accept failed") || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
  end
end
