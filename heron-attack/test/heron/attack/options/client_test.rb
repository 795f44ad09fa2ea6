# frozen_string_literal: true

require "test_helper"
require_relative "../support/option_groups"

class OptionsClientTest < Minitest::Test
  include OptionGroups
  Client = Heron::Attack::Options::Client

  def client(*argv)
    parse_group(argv, Client.new)
  end

  def test_defaults_are_http1_with_keepalive_and_a_30s_timeout
    client = Client.new
    assert_equal [30.0, true, false, nil, ["http/1.1"]], [client.timeout, client.keepalive, client.http2, client.max_streams, client.alpn]
    http2 = client("--http2", "--timeout", "500ms")
    assert_equal [0.5, 100, ["h2"]], [http2.timeout, http2.max_streams, http2.alpn]
  end

  def test_checks_the_timeout_and_what_http2_needs
    assert_raises(Heron::Attack::UsageError) { client("--timeout", "0").check! }
    error = assert_raises(Heron::Attack::UsageError) { client("--http2", "--no-keepalive").http2! }
    assert_equal "--no-keepalive does not apply to --http2 (streams share connections)", error.message
    error = assert_raises(Heron::Attack::UsageError) { client("--http2", "--max-streams", "10001").http2! }
    assert_equal "--max-streams must be at most 10000", error.message
    client("--http2", "--max-streams", "10000").http2!
  end
end
