# frozen_string_literal: true

# Static files for bench/file_serving.rb: Rack::Files over the directory in BENCH_FILES_DIR.
require "rack/files"

run Rack::Files.new(ENV.fetch("BENCH_FILES_DIR"))
