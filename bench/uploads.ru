# frozen_string_literal: true

# Upload sink for bench/uploads.rb. /buffer reads rack.input in 16 KiB pieces into one String
# (read(16384, buffer)), as a streaming app does; /pieces reads read(16384), a new String each
# time; /read calls read() with no argument, which by necessity holds the whole body. Each
# answers the byte count.
PIECE = 16 * 1024

run lambda { |env|
  input = env["rack.input"]
  total = 0
  case env["PATH_INFO"]
  when "/read"
    total = input.read.bytesize
  when "/pieces"
    while (piece = input.read(PIECE)) do total += piece.bytesize end
  else
    buffer = String.new
    total += buffer.bytesize while input.read(PIECE, buffer)
  end
  [200, { "content-type" => "text/plain" }, [total.to_s]]
}
