# frozen_string_literal: true

# Hello world for bench/run.rb: a plain Rack lambda with a 12-byte body, no middleware.
BODY = ["Hello World!"].freeze
HEADERS = { "content-type" => "text/plain", "content-length" => "12" }.freeze

run ->(_env) { [200, HEADERS.dup, BODY] }
