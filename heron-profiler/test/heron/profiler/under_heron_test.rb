# frozen_string_literal: true

require "test_helper"
require "json"
require "sequel"
require "heron/profiler"
require_relative "../../../../test/support/http2_client"

# The profiler inside Heron, served for real: one record per HTTP/2 stream, and N+1 warnings as
# JSON objects through Heron's own logger in JSON mode (moved here from the core's tests, which run
# without this gem).
class ProfilerUnderHeronTest < Minitest::Test
  include ServerHelper

  # Each stream's app call sleeps, so the three overlap on the connection.
  SLOW = ->(env) { sleep(0.1); [200, { "content-type" => "text/plain" }, [env["PATH_INFO"]]] }

  def client(port) = HTTP2TestClient.new(TCPSocket.new("127.0.0.1", port))

  def test_the_profiler_measures_each_stream
    config = Heron::Configuration.new(environment: "development", profile: true)
    app = Heron::Profiler.wrap(SLOW, config)
    with_server(app, environment: "development") do |port, _server|
      h2 = client(port)
      streams = Array.new(3) { |i| h2.request("GET", "/p#{i}") }
      h2.wait(*streams)
      ids = streams.map { |stream| stream.headers.assoc("server-timing")&.last.to_s[/heron;desc="([^"]+)"/, 1] }
      assert_equal 3, ids.compact.uniq.size, "one record per stream: #{streams.map(&:headers).inspect}"
      streams.each { |stream| assert_match(/app;dur=\d/, stream.headers.assoc("server-timing").last) }
    ensure
      h2&.close
    end
  end

  def test_n_plus_one_warnings_are_json_objects_in_json_mode
    db = Sequel.sqlite
    db.create_table(:items) { primary_key :id }
    3.times { db[:items].insert({}) }
    app = ->(_env) { [200, {}, [db[:items].all.map { |row| db[:items].where(id: row[:id]).count }.sum.to_s]] }
    config = Heron::Configuration.new(environment: "development", log_format: :json, error_io: (errors = StringIO.new))
    with_server(Heron::Profiler.wrap(app, config, logger: Heron::Log::Logger.new(config)), lint: false, log_format: :json) do |port|
      raw_request(port, "GET /items HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    end
    entry = JSON.parse(errors.string.lines.find { |line| line.include?("n_plus_one") })
    assert_equal ["warn", "n_plus_one", "GET /items", 3], entry.values_at("level", "event", "request", "count")
    assert_match(/SELECT count/, entry["query"])
  end
end
