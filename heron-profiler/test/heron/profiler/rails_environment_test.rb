# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "socket"
require_relative "../../../../test/support/install_helper"
require_relative "../../../../test/support/rails_app"

# A real Rails 7.1 app (ActiveRecord on SQLite; Rails from HERON_RAILS_GEM_HOME) with
# heron-profiler in its bundle, under `rails server -u heron` in development: the profiler's
# headers (`server-timing`, `x-heron-n-plus-one` with its SQL) reach only the clients the
# dashboard's rule allows: not a client on a non-loopback address, not one behind a proxy.
class ProfilerRailsEnvironmentTest < Minitest::Test
  include InstallHelper
  include RailsApp

  def test_a_non_loopback_client_in_development_gets_no_profiler_headers
    address = non_loopback_address or skip "this machine has no non-loopback address"
    with_queries_app("development", :rails, "0.0.0.0", profiler: true) do |port, log|
      local = get_when_up(port, "/", log)
      assert_equal "development 21 127.0.0.1", local.body
      assert_match(/, development environment,/, File.read(log))
      assert_match(/heron;desc=/, local["server-timing"], "a loopback client gets the profiler's headers")
      refute_nil local["x-heron-n-plus-one"]
      remote = Net::HTTP.start(address, port, local_host: address) { |http| http.get("/") }
      proxied = Net::HTTP.start("127.0.0.1", port) { |http| http.get("/", "X-Forwarded-For" => "203.0.113.9") }
      assert_equal "development 21 #{address}", remote.body, "the server saw a non-loopback peer"
      [remote, proxied].each do |response|
        assert_nil response["server-timing"], response.to_hash.inspect
        assert_empty response.to_hash.keys.grep(/\Ax-heron/), response.to_hash.inspect
      end
    end
  end

  private

  # An address of this machine's own that is not loopback: a connection from it to itself is a
  # real non-loopback client.
  def non_loopback_address
    Socket.ip_address_list.find { |ai| ai.ipv4? && !ai.ipv4_loopback? && !ai.ipv4_multicast? }&.ip_address
  end
end
