# frozen_string_literal: true

module Bench
  # Upload bodies for the upload benchmarks.
  module BodyFile
    module_function

    # A file of zeros, sparse (so a GB costs no disk writes), made once per directory and size.
    # @param dir [String]
    # @param bytes [Integer]
    # @return [String] its path.
    def zeros(dir, bytes)
      path = File.join(dir, "#{bytes}.bin")
      File.open(path, "wb") { |f| f.truncate(bytes) } unless File.exist?(path)
      path
    end
  end
end
