# frozen_string_literal: true

require "test_helper"
require "net/http"

# Server::Reactor: Kernel#sleep in its fibers ends on time, in order, and without a timer per
# sleep in the event loop's heap; on a real server, requests sleeping in the app do the same.
class ReactorTest < Minitest::Test
  include ServerHelper

  def test_sleeps_end_after_their_duration_in_deadline_order
    woke = []
    started = now
    Heron::Server::Reactor.sync do |task|
      [0.06, 0.02, 0.04, 0.02].each_with_index.map do |seconds, i|
        task.async { sleep(seconds) && woke << [i, now - started] }
      end.each(&:wait)
    end
    assert_equal [1, 3, 2, 0], woke.map(&:first)
    woke.zip([0.02, 0.02, 0.04, 0.06]).each { |(_, took), seconds| assert_operator took, :>=, seconds }
  end

  def test_a_stopped_sleeper_and_more_durations_than_lanes_still_work
    durations = Array.new(Heron::Server::SleepLanes::MAX_LANES + 4) { |i| 0.01 + (i * 0.001) }
    Heron::Server::Reactor.sync do |task|
      stopped = task.async { sleep 30 }
      sleepers = durations.map { |seconds| task.async { sleep(seconds) && :woke } }
      stopped.stop
      assert_equal [:woke] * durations.size, sleepers.map(&:wait)
      assert stopped.stopped?
    end
  end

  def test_requests_sleeping_in_the_app_add_no_timers_to_the_event_loop
    entered = 0
    app = lambda do |env|
      next [200, {}, [timers(entered).to_s]] if env["PATH_INFO"] == "/probe"
      entered += 1
      sleep 0.5
      [200, {}, ["slept"]]
    end
    with_server(app) do |port|
      sleepers = Array.new(40) { Thread.new { Net::HTTP.get(URI("http://127.0.0.1:#{port}/sleep")) } }
      heap = probe(port) until heap
      assert_operator heap, :<, 10, "40 requests asleep, #{heap} timers in io-event's heap"
      assert_equal ["slept"] * 40, sleepers.map(&:value)
    end
  end

  private

  # @return [Integer, nil] the timers in the reactor's heap once all 40 requests sleep.
  def timers(entered)
    entered < 40 ? "" : Fiber.scheduler.instance_variable_get(:@timers).size
  end

  def probe(port)
    body = Net::HTTP.get(URI("http://127.0.0.1:#{port}/probe"))
    body.empty? ? Thread.pass : Integer(body)
  end

  def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
end
