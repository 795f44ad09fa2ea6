# frozen_string_literal: true

require "test_helper"
require_relative "../support/option_groups"

class OptionsWebSocketTest < Minitest::Test
  include OptionGroups
  Options = Heron::Attack::Options

  def web_socket(*argv)
    parse_group(argv, Options::WebSocket.new)
  end

  def test_defaults_open_100_connections_a_second
    web_socket = Options::WebSocket.new
    assert_equal [100.0, nil, nil], [web_socket.connect_rate, web_socket.messages, web_socket.message_rate]
  end

  def test_check_wants_a_positive_connect_rate
    web_socket("--connect-rate", "0.5").check!
    error = assert_raises(Heron::Attack::UsageError) { web_socket("--connect-rate", "0").check! }
    assert_equal "--connect-rate must be positive", error.message
  end

  # 4 connections opened 2 a second, each sending 5 messages at 10/s: the last opens at 1.5 s and
  # is done at 2 s, 20 messages in all.
  def test_plan_turns_the_load_into_the_whole_runs
    load = parse_group(%w[-r 10 -n 5 -c 4], Options::Load.new)
    load.check!
    web_socket = web_socket("--connect-rate", "2")
    web_socket.plan!(load)
    assert_equal [5, 10.0], [web_socket.messages, web_socket.message_rate]
    assert_equal [20, 10.0, 20], [load.requests, load.rate, load.total_requests]
  end
end
