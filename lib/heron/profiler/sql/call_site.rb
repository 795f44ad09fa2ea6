# frozen_string_literal: true

require "rbconfig"

module Heron
  module Profiler
    module Sql
      # Finds where in the application a query came from: the first frame of the current stack
      # that is not inside an installed gem, Ruby's own library or Heron. Paths under the working
      # directory are shown relative to it (`app/users.rb:14`).
      class CallSite
        BATCH = 16
        DEPTH = 256

        # @return [Array<String>] path prefixes that are not application code.
        def self.library_prefixes
          dirs = Gem.path + [Gem.default_dir, File.expand_path("../..", __dir__)]
          dirs += RbConfig::CONFIG.values_at("rubylibdir", "rubyarchdir", "vendordir", "sitedir")
          dirs << Bundler.bundle_path.to_s if defined?(Bundler) && Bundler.respond_to?(:bundle_path)
          dirs.compact.reject(&:empty?).map { |dir| File.join(File.expand_path(dir), "") }.uniq + ["<internal:"]
        end

        # @param prefixes [Array<String>] paths whose frames are skipped.
        # @param root [String] the directory paths are shown relative to.
        def initialize(prefixes = self.class.library_prefixes, root = Dir.pwd)
          @library = prefixes.empty? ? /(?!)/ : /\A(?:#{prefixes.map { |prefix| Regexp.escape(prefix) }.join('|')})/
          @root = File.join(root, "")
        end

        # @param skip [Integer] frames above the caller to skip.
        # @return [String, nil] "path:line" of the first application frame, nil when none.
        def find(skip = 1)
          start = skip + 1
          while start < DEPTH && (batch = caller_locations(start, BATCH))
            frame = batch.find { |location| app?(location.absolute_path || location.path) }
            return format_frame(frame) if frame
            start += BATCH
          end
        end

        # @param path [String] a frame's file.
        # @return [Boolean] whether the file is application code.
        def app?(path)
          !@library.match?(path)
        end

        private

        def format_frame(location)
          path = location.absolute_path || location.path
          path = path.delete_prefix(@root)
          "#{path}:#{location.lineno}"
        end
      end
    end
  end
end
