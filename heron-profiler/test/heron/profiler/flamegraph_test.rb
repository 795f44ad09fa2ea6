# frozen_string_literal: true

require "test_helper"
require "json"
require "net/http"
require "heron/profiler"
require "heron/profiler/flamegraph"
require_relative "profiled_server"
require "support/cpu_burn"

# `?__heron=flamegraph` behind the real profiler middleware on a real server, asked with
# Net::HTTP.
class FlamegraphTest < Minitest::Test
  include ProfiledServer

  # Spins in a method of a known name; /sleepy waits (through the fiber scheduler) until a /busy
  # request has spun, so the two run at once on one reactor.
  class SpinningApp
    include CpuBurn

    attr_reader :sleeping

    def initialize
      @sleeping = Thread::Queue.new
      @busy_done = false
    end

    def call(env)
      case env["PATH_INFO"]
      when "/busy" then heron_test_spin_busily(150).then { @busy_done = true }
      when "/sleepy" then wait_for_busy
      else heron_test_spin_busily(40)
      end
      [200, { "content-type" => "text/plain" }, ["done"]]
    end

    def heron_test_spin_busily(ms)
      burn_cpu(ms)
    end

    private

    def wait_for_busy
      @sleeping << true
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 20
      sleep 0.005 until @busy_done || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
    end
  end

  def setup
    @app = SpinningApp.new
  end

  def get(port, target, headers = {})
    Net::HTTP.start("127.0.0.1", port, read_timeout: 30) { |http| http.get(target, headers) }
  end

  def test_the_page_draws_the_method_the_app_spins_in
    with_profiled_server(@app) do |port|
      response = get(port, "/spin?x=1&__heron=flamegraph")
      assert_equal "200", response.code
      assert_equal "text/html; charset=utf-8", response["content-type"]
      assert_includes response.body, "<svg"
      assert_includes response.body, "SpinningApp#heron_test_spin_busily"
      assert_match(%r{Flamegraph: GET /spin\?x=1 -&gt; 200}, response.body)
      refute_match(/<script|https?:\/\/(?!www\.w3\.org\/2000\/svg)/, response.body, "self-contained: no script, nothing fetched")
    end
  end

  def test_speedscope_json_has_the_schema_keys_and_the_frames
    with_profiled_server(@app) do |port|
      response = get(port, "/spin?__heron=flamegraph&format=speedscope")
      assert_equal "application/json", response["content-type"]
      file = JSON.parse(response.body)
      assert_equal "https://www.speedscope.app/file-format-schema.json", file["$schema"]
      profile = file.fetch("profiles").first
      assert_equal %w[endValue name samples startValue type unit weights], (profile.keys & %w[type name unit startValue endValue samples weights]).sort
      assert_equal "sampled", profile["type"]
      assert_equal profile["samples"].size, profile["weights"].size
      frames = file.fetch("shared").fetch("frames")
      assert(profile["samples"].flatten.all? { |index| frames[index] }, "every sample names frames of shared.frames")
      assert_includes frames.map { |frame| frame["name"] }, "FlamegraphTest::SpinningApp#heron_test_spin_busily"
    end
  end

  def test_another_requests_samples_are_not_charged_to_a_sleeping_one
    with_profiled_server(@app) do |port|
      sleepy = Thread.new { get(port, "/sleepy?__heron=flamegraph") }
      @app.sleeping.pop
      assert_equal "200", get(port, "/busy").code
      page = sleepy.value.body
      refute_includes page, "heron_test_spin_busily", "the busy request's frames are not in the sleeping one's graph"
      foreign = page[/(\d+) samples were taken while other fibers/, 1].to_i
      assert_operator foreign, :>=, 20, "the page counts the samples taken while the busy request ran"
    end
  end

  def test_refused_for_a_forwarded_request_without_the_token
    with_profiled_server(@app) do |port|
      assert_equal "404", get(port, "/spin?__heron=flamegraph", "X-Forwarded-For" => "198.51.100.7").code
    end
    with_profiled_server(@app, profile_token: "s3cret") do |port|
      assert_equal "404", get(port, "/spin?__heron=flamegraph").code, "with a token set, loopback needs it too"
      assert_equal "200", get(port, "/spin?__heron=flamegraph", "X-Forwarded-For" => "198.51.100.7", "X-Heron-Token" => "s3cret").code
    end
  end

  def test_without_stackprof_the_answer_says_to_add_it
    flamegraph = Heron::Profiler::Flamegraph.new(@app, Heron::Configuration.new, library: "heron_no_such_stackprof")
    status, headers, body = Rack::Lint.new(flamegraph).call(Rack::MockRequest.env_for("/spin?__heron=flamegraph", "REMOTE_ADDR" => "127.0.0.1"))
    text = body.to_enum(:each).to_a.join
    body.close
    assert_equal 501, status
    assert_equal "text/plain; charset=utf-8", headers["content-type"]
    assert_match(/add `gem "stackprof"`/i, text)
  end
end
