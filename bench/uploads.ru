# frozen_string_literal: true

# Upload sink for bench/uploads.rb. /buffer reads rack.input in 16 KiB pieces into one String
# (read(16384, buffer)), as a streaming app does; /read calls read() with no argument, which by
# necessity holds the whole body. Either answers the byte count.
PIECE = 16 * 1024

run lambda { |env|
  input = env["rack.input"]
  total = 0
  if env["PATH_INFO"] == "/read"
    total = input.read.bytesize
  else
    buffer = String.new
    total += buffer.bytesize while input.read(PIECE, buffer)
  end
  [200, { "content-type" => "text/plain" }, [total.to_s]]
}
