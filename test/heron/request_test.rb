# frozen_string_literal: true

require "test_helper"

# Heron::Request: what a connection knows of one request, and reusing its object.
class HeronRequestTest < Minitest::Test
  def finished_request
    request = Heron::Request.new({ "REQUEST_METHOD" => "HEAD" }, :input, false, 0, 1.0)
    request.status = 500
    request.headers = { "x-a" => "1" }
    request.bytes = 10
    request.error = RuntimeError.new("x")
    request.app_started_at = 2.0
    request.upgraded = true
    request
  end

  def test_reuse_makes_the_object_a_new_request
    request = finished_request
    env = { "REQUEST_METHOD" => "GET" }
    assert_same request, request.reuse(env, :next_input, true, 1, 3.0)
    assert_equal [env, :next_input, true, 3.0, 0], [request.env, request.input, request.keepalive, request.started_at, request.bytes]
    assert_equal [nil, nil, nil, nil, nil], [request.status, request.headers, request.error, request.app_started_at, request.upgraded]
    assert_predicate request, :http11?
    refute_predicate request, :head?
  end

  def test_clear_drops_what_the_finished_request_refers_to
    request = finished_request
    assert_same request, request.clear
    assert_equal [nil, nil, nil, nil], [request.env, request.input, request.headers, request.error]
  end
end
