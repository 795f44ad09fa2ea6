# frozen_string_literal: true

require "test_helper"
require "tmpdir"

# `rack.upgrade` WebSockets with a browser: headless Chromium loads a page whose script opens a
# WebSocket, sends a message, and sends back what the server echoed with a close code of its
# own; the handler sees both messages and the close.
class WebSocketChromiumTest < Minitest::Test
  PAGE = <<~HTML
    <!doctype html><title>ws</title><script>
    const ws = new WebSocket("ws://" + location.host + "/socket");
    ws.onopen = () => ws.send("hello from chromium");
    ws.onmessage = (event) => { ws.send("echoed: " + event.data); ws.close(4002, "bye"); };
    </script>
  HTML

  # Echoes once, and reports what it saw.
  class Handler
    def initialize(events) = @events = events

    def on_message(client, data)
      @events << data
      client.write(data.upcase) if data.start_with?("hello")
    end

    def on_close(_client) = @events << :closed
  end

  def test_a_browser_websocket_sends_gets_its_echo_and_closes
    chromium = %w[chromium chromium-browser].find { |name| system("command -v #{name} >/dev/null") }
    skip "chromium is not installed" unless chromium
    events = Queue.new
    app = lambda do |env|
      next [200, { "content-type" => "text/html" }, [PAGE]] unless env["rack.upgrade?"] == :websocket
      env["rack.upgrade"] = Handler.new(events)
      [200, {}, []]
    end
    Dir.mktmpdir do |dir|
      with_server(app, lint: false) do |port|
        browser = Process.spawn(chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                "--user-data-dir=#{dir}", "http://127.0.0.1:#{port}/", %i[out err] => File::NULL, pgroup: true)
        seen = Timeout.timeout(ProcessHelper::PATIENCE) { Array.new(3) { events.pop } }
        assert_equal ["hello from chromium", "echoed: HELLO FROM CHROMIUM", :closed], seen
        assert_match(%r{"GET /socket HTTP/1.1" 101 .*HeadlessChrome}, server_log)
      ensure
        if browser
          Process.kill("TERM", -browser)
          Process.wait(browser)
        end
      end
    end
  end
end
