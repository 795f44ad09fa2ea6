# frozen_string_literal: true

# For bench/connection_memory.rb: answers GET at once; a POST reads its whole body first, so a
# client that sends its body slowly keeps the request (and the server's resources for it) open.
HEADERS = { "content-type" => "text/plain", "content-length" => "2" }.freeze

run lambda { |env|
  env["rack.input"].read if env["REQUEST_METHOD"] == "POST"
  [200, HEADERS.dup, ["ok"]]
}
