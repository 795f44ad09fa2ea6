# frozen_string_literal: true

require "open3"

# Runs the real curl, for tests that check what a common client sees on the wire.
module CurlHelper
  # `curl -v`: its trace (stderr: the request, every response head, 1xx included) and the body
  # (stdout), in one String; fails the test when curl fails.
  # @param args [Array<String>] more curl arguments, the URL last.
  # @return [String]
  def curl_trace(*args)
    out, status = Open3.capture2e("curl", "-sS", "-v", "--max-time", "30", *args)
    assert status.success?, out
    out
  end
end
