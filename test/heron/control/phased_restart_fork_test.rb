# frozen_string_literal: true

require "test_helper"
require "net/http"

# `POST /control/phased-restart` makes the master fork new workers while its control thread is
# still answering (and, here, answering `/stats` scrapes too). A worker forked while that
# thread was inside one of its fibers used to crash in GC (`[BUG] try to mark T_NONE object`,
# a segmentation fault) or die quietly, losing the requests it had accepted. Several phased
# restarts in a row, each under load from `heron attack` and a scraper, must lose nothing and
# crash no worker.
class ControlPhasedRestartForkTest < Minitest::Test
  # The app allocates at boot and for each request, as a real one does, so each new worker
  # collects garbage soon after its threads started.
  APP = <<~RUBY
    BOOT = Array.new(300_000) { |i| "boot object \#{i}" }
    run lambda { |env|
      rows = Array.new(20_000) { |i| "row \#{i}" }
      [200, { "content-type" => "text/plain" }, [Process.pid.to_s, rows.size.to_s]]
    }
  RUBY
  ROUNDS = 6

  def test_phased_restarts_from_the_control_endpoint_lose_no_request_and_crash_no_worker
    control = free_port
    pid, port, log = spawn_heron(APP, "-w", "2", "-q", "--control-bind", "tcp://127.0.0.1:#{control}")
    eventually(timeout: 60) { get(control, "/health/ready")&.code == "200" }
    ROUNDS.times { |round| phased_restart_under_load(round, port, control, log) }
    Process.kill("TERM", pid)
    assert wait_exit(pid)&.success?
  end

  private

  def phased_restart_under_load(round, port, control, log)
    load = start_load(port, rate: 40)
    wait_for_answers(load)
    scraper = scrape(control)
    answer = post(control, "/control/phased-restart")
    assert_equal "202", answer.code, answer.body
    eventually(timeout: 60) { File.read(log).scan("phased restart done").size > round }
    Process.kill("TERM", scraper)
    Process.wait(scraper)
    stop_load(load)
    assert_every_request_answered(load)
    refute_match(/\[BUG\]|exited \(|Segmentation fault/, File.read(log), "round #{round}: a worker died")
  end

  # `heron attack` on `/stats` too, 300 a second: the control thread is usually inside a fiber.
  def scrape(control)
    Process.spawn(RbConfig.ruby, File.join(ProcessHelper::ROOT, "exe/heron"), "attack", "http://127.0.0.1:#{control}/stats",
                  "--rate", "300", "--duration", "30", "--no-keepalive", out: File::NULL, err: File::NULL)
  end

  def get(port, path)
    Net::HTTP.start("127.0.0.1", port, open_timeout: 5, read_timeout: 10) { |http| http.get(path) }
  rescue SystemCallError, IOError, Net::OpenTimeout, Net::ReadTimeout
    nil
  end

  def post(port, path)
    Net::HTTP.start("127.0.0.1", port, open_timeout: 5, read_timeout: 10) { |http| http.post(path, "") }
  end
end
