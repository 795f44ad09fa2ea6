# frozen_string_literal: true

require "json"
require "net/http"
require_relative "../../lib/heron/clock"

# The core's own load for its restart tests (the core's tests run without heron-attack): an open
# loop of GETs at a fixed rate, each on a new connection in a thread of its own, so a slow answer
# never delays the next request. Run as a child process (`ruby load_driver.rb URL RATE SECONDS
# REPORT LINES`): it sends for SECONDS, or until SIGTERM stops it sending, appends a line to LINES
# as each answer arrives, and writes REPORT (JSON: requests sent, answers by status, errors by
# class with a few samples) when every request sent has ended.
class LoadDriver
  include Heron::Clock

  TIMEOUT = 20 # seconds a request may take: a restart under a loaded machine can be slow
  SAMPLES = 5

  # @param uri [URI::HTTP] what to GET.
  # @param rate [Integer] requests a second.
  # @param seconds [Numeric] how long to send.
  # @param lines [IO] gets "STATUS\n" (or "error CLASS\n") per request as it ends.
  def initialize(uri, rate, seconds, lines)
    @uri, @rate, @planned, @lines = uri, rate, (rate * seconds).round, lines
    @codes = Hash.new(0)
    @errors = Hash.new(0)
    @samples = []
    @lock = Mutex.new
    @stopped = false
  end

  # Sends no further request (those sent are still awaited); safe in a signal handler.
  # @return [void]
  def stop
    @stopped = true
  end

  # Sends every request at its time, waits for all of them.
  # @return [Hash] the report.
  def run
    started = now
    threads = []
    until threads.size == @planned
      delay = started + threads.size.fdiv(@rate) - now
      sleep(delay) if delay.positive?
      break if @stopped
      threads << Thread.new { record(fetch) }
    end
    threads.each(&:join)
    { "requests" => { "sent" => threads.size }, "status_codes" => @codes, "errors" => @errors, "error_samples" => @samples }
  end

  private

  def fetch
    Net::HTTP.start(@uri.host, @uri.port, open_timeout: TIMEOUT, read_timeout: TIMEOUT) do |http|
      http.get(@uri.request_uri, "Connection" => "close").code
    end
  rescue StandardError => e
    e
  end

  def record(result)
    @lock.synchronize do
      if result.is_a?(Exception)
        @errors[result.class.name] += 1
        @samples << "#{result.class}: #{result.message}" if @samples.size < SAMPLES
        @lines.puts("error #{result.class}")
      else
        @codes[result] += 1
        @lines.puts(result)
      end
    end
  end
end

if $PROGRAM_NAME == __FILE__
  url, rate, seconds, report, lines = ARGV
  File.open(lines, "a") do |out|
    out.sync = true
    driver = LoadDriver.new(URI(url), Integer(rate), Float(seconds), out)
    Signal.trap("TERM") { driver.stop }
    File.write(report, JSON.generate(driver.run))
  end
end
