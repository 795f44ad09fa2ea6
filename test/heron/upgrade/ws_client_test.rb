# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"

# `rack.upgrade` WebSockets with a real client: node's `ws` package (bin/setup installs it into
# tmp/node), which masks, pings and runs the close handshake as browsers' peers do.
class WebSocketWsClientTest < Minitest::Test
  ROOT = File.expand_path("../../..", __dir__)
  SCRIPT = File.join(ROOT, "test/support/ws_client.js")

  # Greets, then echoes.
  class Echo
    def on_open(client) = client.write("welcome")
    def on_message(client, data) = client.write(data)
  end

  def setup
    skip "node's ws is not installed (bin/setup)" unless File.directory?(File.join(ROOT, "tmp/node/node_modules/ws"))
  end

  def test_the_ws_client_gets_its_echoes_its_pong_and_its_close_code_back
    app = lambda do |env|
      env["rack.upgrade"] = Echo.new if env["rack.upgrade?"] == :websocket
      [200, {}, []]
    end
    with_server(app, lint: false) do |port|
      out, status = Open3.capture2("node", SCRIPT, "ws://127.0.0.1:#{port}/chat")
      assert status.success?, out
      seen = JSON.parse(out)
      assert_nil seen["error"]
      assert_equal ["welcome", "héllo from ws", { "binary" => 200 * 1024, "intact" => true }], seen["messages"]
      assert_equal "are you there", seen["pong"]
      assert_equal [4001, ""], seen["close"], "the client's close code comes back"
    end
  end
end
