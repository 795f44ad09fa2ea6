# frozen_string_literal: true

require "test_helper"
require "heron/attack"

class H2HeadersTest < Minitest::Test
  Target = Heron::Attack::Target

  def test_pseudo_headers_then_lower_case_headers_without_the_connection_ones
    target = Target.new("post", "https://example.test:8443/a?b=1", headers: ["X-Trace: 1", "Connection: keep-alive", "User-Agent: me"],
                                                                    body: "hi")
    assert_equal [[":method", "POST"], [":scheme", "https"], [":authority", "example.test:8443"], [":path", "/a?b=1"],
                  ["x-trace", "1"], ["user-agent", "me"], ["content-length", "2"]], target.h2_headers
  end

  def test_a_host_header_becomes_the_authority_and_the_default_user_agent_is_added
    target = Target.new("GET", "http://127.0.0.1/", headers: ["Host: example.test"])
    assert_equal [[":method", "GET"], [":scheme", "http"], [":authority", "example.test"], [":path", "/"],
                  ["user-agent", "heron-attack/#{Heron::Attack::VERSION}"]], target.h2_headers
  end
end
