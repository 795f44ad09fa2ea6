# frozen_string_literal: true

# The app of bench/websocket_idle.rb: a hub every WebSocket joins. A message "echo ..." comes
# back to its sender; "broadcast ..." goes to every member. Through rack.upgrade (Heron, Iodine)
# or, when the server offers no rack.upgrade or WS_API=async asks, async-websocket (a fiber
# per connection: Falcon, and Heron for comparison). Members are kept in a Hash (insertion
# order, O(1) removal).
module WebSocketHub
  MEMBERS = {}

  # rack.upgrade callbacks.
  module Callbacks
    def self.on_open(client) = MEMBERS[client] = true
    def self.on_close(client) = MEMBERS.delete(client)

    def self.on_message(client, data)
      return client.write(data) if data.start_with?("echo")
      MEMBERS.each_key { |member| member.write(data) }
    end
  end

  # async-websocket: a fiber per connection, reading in a loop.
  def self.async(env)
    require "async/websocket/adapters/rack"
    Async::WebSocket::Adapters::Rack.open(env) do |connection|
      MEMBERS[connection] = true
      while (message = connection.read)
        text = message.buffer
        targets = text.start_with?("echo") ? [connection] : MEMBERS.keys
        targets.each do |member|
          member.write(text)
          member.flush
        end
      end
    ensure
      MEMBERS.delete(connection)
    end
  end
end

run lambda { |env|
  if env["rack.upgrade?"] == :websocket && ENV["WS_API"] != "async"
    env["rack.upgrade"] = WebSocketHub::Callbacks
    [200, {}, []]
  elsif env["HTTP_UPGRADE"]
    WebSocketHub.async(env) || [400, {}, ["not a websocket\n"]]
  else
    [200, { "content-type" => "text/plain" }, ["members #{WebSocketHub::MEMBERS.size}\n"]]
  end
}
