# frozen_string_literal: true

# A WebSocket echo app for the attack tests (async-websocket, so it runs on Heron and on Falcon):
# every message comes back as it came; a plain HTTP request gets 426.
require "async/websocket/adapters/rack"

run(lambda do |env|
  response = Async::WebSocket::Adapters::Rack.open(env) do |connection|
    while (message = connection.read)
      connection.write(message)
      connection.flush
    end
  end
  response || [426, { "content-type" => "text/plain" }, ["websocket only\n"]]
end)
