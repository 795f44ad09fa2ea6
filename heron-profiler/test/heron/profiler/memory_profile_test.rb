# frozen_string_literal: true

require "test_helper"
require "heron/profiler/memory_profile"

class MemoryProfileTest < Minitest::Test
  # Allocates a known number of strings and remembers the query string it was called with.
  class AllocatingApp
    attr_reader :seen_query, :closed

    def call(env)
      @seen_query = env["QUERY_STRING"]
      kept = Array.new(500) { |i| "heron-memory-#{i}" }
      [200, { "content-type" => "text/plain" }, Body.new(kept, self)]
    end

    def close!
      @closed = true
    end

    # A body whose each allocates too, so the profile must cover the streaming phase.
    Body = Struct.new(:kept, :app) do
      def each
        kept.each { |string| yield string.upcase }
      end

      def close
        app.close!
      end
    end
  end

  def setup
    @app = AllocatingApp.new
    @config = Heron::Configuration.new
  end

  def test_returns_the_memory_report_instead_of_the_response
    status, headers, body = call(query: "page=2&__heron=memory")
    assert_equal 200, status
    assert_equal "text/plain; charset=utf-8", headers["content-type"]
    assert_match(%r{\AHeron memory profile: GET /things\?page=2 -> 200\n}, body)
    assert_match(/Total allocated: [\d.]+ [kM]?B \(\d+ objects\)/, body)
    assert_match(/Total retained: /, body)
    assert_match(/allocated memory by location/, body)
    assert_operator body[/Total allocated: .* \((\d+) objects\)/, 1].to_i, :>=, 1000
    assert_equal "page=2", @app.seen_query
    assert @app.closed, "the app's body is closed"
  end

  def test_profiles_a_streaming_body
    streaming = Rack::Lint.new(->(_env) { [200, {}, ->(stream) { stream.write("x" * 10) }] })
    status, _, body = Heron::Profiler::MemoryProfile.new(streaming, @config).call(env_for("__heron=memory"))
    assert_equal 200, status
    assert_match(/Total allocated/, body.join)
  end

  def test_missing_gem_answers_501_naming_it
    profile = Heron::Profiler::MemoryProfile.new(@app, @config, library: "heron_no_such_memory_profiler")
    status, headers, body = Rack::Lint.new(profile).call(env_for("__heron=memory"))
    text = body.to_enum(:each).to_a.join
    body.close
    assert_equal 501, status
    assert_equal "text/plain; charset=utf-8", headers["content-type"]
    assert_match(/needs the memory_profiler gem/, text)
    assert_match(/heron_no_such_memory_profiler/, text)
    assert_nil @app.seen_query, "the app is not run"
  end

  def test_refused_clients_get_a_plain_404_and_the_app_is_not_run
    status, _, body = call(query: "__heron=memory", remote: "198.51.100.7")
    assert_equal [404, "Not Found\n"], [status, body]
    assert_nil @app.seen_query
  end

  def test_token_opens_it_remotely_and_is_not_passed_to_the_app
    @config = Heron::Configuration.new(profile_token: "t0k")
    status, = call(query: "token=t0k&__heron=memory&token=other", remote: "198.51.100.7")
    assert_equal 200, status
    assert_equal "token=other", @app.seen_query
  end

  private

  def env_for(query, remote: "127.0.0.1")
    Rack::MockRequest.env_for("/things", "QUERY_STRING" => query, "REMOTE_ADDR" => remote)
  end

  def call(query:, remote: "127.0.0.1")
    profile = Rack::Lint.new(Heron::Profiler::MemoryProfile.new(Rack::Lint.new(@app), @config))
    status, headers, body = profile.call(env_for(query, remote: remote))
    text = +""
    body.each { |chunk| text << chunk }
    body.close
    [status, headers, text]
  end
end
