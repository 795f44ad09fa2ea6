# frozen_string_literal: true

# Static files for bench/run.rb's static row: Rack::Files over tmp/bench-static, which holds
# small.bin (4 KiB) and big.bin (1 MiB) of fixed pseudo-random bytes, made here when missing.
# Rack::Files answers with a body that has `to_path`, so a server may send the file with
# sendfile(2) instead of reading it through Ruby (which ones do: bench/results/latest.md).
require "fileutils"
require "rack/files"

STATIC_DIR = File.expand_path("../tmp/bench-static", __dir__)
STATIC_FILES = { "small.bin" => 4 * 1024, "big.bin" => 1024 * 1024 }.freeze

FileUtils.mkdir_p(STATIC_DIR)
STATIC_FILES.each do |name, size|
  path = File.join(STATIC_DIR, name)
  next if File.size?(path) == size

  File.binwrite("#{path}.#{Process.pid}", Random.new(size).bytes(size))
  File.rename("#{path}.#{Process.pid}", path) # whole or absent, whichever server made it
end

run Rack::Files.new(STATIC_DIR)
