# frozen_string_literal: true

require "test_helper"
require_relative "../support/option_groups"

class OptionsRequestTest < Minitest::Test
  include OptionGroups
  Request = Heron::Attack::Options::Request

  def request(*argv)
    parse_group(argv, Request.new)
  end

  def test_defaults_are_a_bare_get_picked_round_robin
    request = Request.new
    assert_equal ["GET", [], nil, nil, "round-robin"], [request.method, request.headers, request.body, request.targets_file, request.pick]
    assert_includes 0...(2**31), request.seed
  end

  def test_a_header_needs_a_name_and_a_colon
    assert_equal ["A: 1", "b:2"], request("-H", "A: 1", "-H", "b:2").headers
    error = assert_raises(Heron::Attack::UsageError) { request("-H", "nocolon") }
    assert_equal "bad header \"nocolon\" (want 'Name: value')", error.message
    assert_raises(Heron::Attack::UsageError) { request("-H", ": empty name") }
  end
end
