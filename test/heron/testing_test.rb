# frozen_string_literal: true

require "test_helper"
require "heron/testing"

# Heron::Testing runs apps through the real connection code without a port.
class TestingTest < Minitest::Test
  # Seed 000's middleware: registers work to run after the reply.
  class Processor
    attr_reader :calls

    def initialize = @calls = 0
    def call = @calls += 1
  end

  class AfterReplyMiddleware
    attr_reader :processor

    def initialize(app)
      @app = app
      @processor = Processor.new
    end

    def call(env)
      env["rack.after_reply"] ||= []
      env["rack.after_reply"] << @processor
      @app.call(env)
    end
  end

  APP = ->(env) { [201, { "content-type" => "text/plain", "x-method" => env["REQUEST_METHOD"] }, ["body=#{env['rack.input'].read}"]] }

  def test_request_returns_status_headers_body_and_env
    response = Heron::Testing.request(Rack::Lint.new(APP), "PUT", "/items?id=3", headers: { "x-token" => "t" }, body: "abc")
    assert_equal [201, "PUT", "body=abc"], [response.status, response.headers["x-method"], response.body]
    assert_equal ["/items", "id=3", "t"], response.env.values_at("PATH_INFO", "QUERY_STRING", "HTTP_X_TOKEN")
    assert_match(%r{"PUT /items\?id=3 HTTP/1.1" 201}, response.log)
  end

  def test_seed_000_middleware_registers_and_runs_its_processor
    middleware = AfterReplyMiddleware.new(Rack::Lint.new(APP))
    response = Heron::Testing.request(middleware, "GET", "/")
    assert_includes response.env["rack.after_reply"], middleware.processor
    assert_equal 1, middleware.processor.calls
  end

  def test_held_callbacks_can_be_inspected_then_run
    middleware = AfterReplyMiddleware.new(Rack::Lint.new(APP))
    response = Heron::Testing.request(middleware, "GET", "/", run_callbacks: false)
    assert_equal [middleware.processor], response.pending_callbacks
    assert_equal 0, middleware.processor.calls
    response.run_callbacks!
    assert_equal 1, middleware.processor.calls
    assert_empty response.pending_callbacks
  end

  def test_continue_helper_reports_whether_and_when_100_was_written
    reader = Heron::Testing.continue_request(Rack::Lint.new(APP), "POST", "/", body: "x" * 5000)
    assert reader.continued?
    assert_operator reader.continue_after, :<, 1.0
    assert reader.body_sent?
    refuser = ->(_env) { [401, { "content-type" => "text/plain" }, ["who are you"]] }
    refused = Heron::Testing.continue_request(Rack::Lint.new(refuser), "POST", "/", body: "x" * 5000)
    assert_equal [401, false, false, "close"], [refused.status, refused.continued?, refused.body_sent?, refused.headers["connection"]]
  end

  def test_eager_setting_and_chunked_response
    streaming = ->(_env) { [200, { "content-type" => "text/plain" }, Enumerator.new { |y| y << "a" << "b" }] }
    response = Heron::Testing.continue_request(streaming, "POST", "/", body: "zz", continue_mode: :eager)
    assert response.continued?
    assert_equal "ab", response.body
  end
end
