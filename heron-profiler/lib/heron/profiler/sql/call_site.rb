# frozen_string_literal: true

require "rbconfig"

module Heron
  module Profiler
    module Sql
      # Finds where in the application a query came from: the first frame of the current stack
      # that is not inside an installed gem, Ruby's own library or Heron. Paths under the working
      # directory are shown relative to it (`app/users.rb:14`).
      #
      # Whether a file is library code is decided once per path and remembered (a query's stack
      # repeats the same few files), so the prefix pattern does not run on every frame of every
      # query; the memory is cleared when it passes {CACHE_LIMIT} paths.
      class CallSite
        BATCH = 16
        DEPTH = 256
        CACHE_LIMIT = 10_000

        # @return [Array<String>] path prefixes that are not application code.
        def self.library_prefixes
          dirs = Gem.path + [Gem.default_dir, File.expand_path("../..", __dir__)]
          dirs += $LOADED_FEATURES.grep(%r{/heron/version\.rb\z}).map { |path| File.dirname(path) } # the server's lib/heron
          dirs += RbConfig::CONFIG.values_at("rubylibdir", "rubyarchdir", "vendordir", "sitedir")
          dirs << Bundler.bundle_path.to_s if defined?(Bundler) && Bundler.respond_to?(:bundle_path)
          dirs.compact.reject(&:empty?).map { |dir| File.join(File.expand_path(dir), "") }.uniq + ["<internal:"]
        end

        # @param prefixes [Array<String>] paths whose frames are skipped.
        # @param root [String] the directory paths are shown relative to.
        def initialize(prefixes = self.class.library_prefixes, root = Dir.pwd)
          @library = prefixes.empty? ? /(?!)/ : /\A(?:#{prefixes.map { |prefix| Regexp.escape(prefix) }.join('|')})/
          @root = File.join(root, "")
          @shown = {}
        end

        # @param skip [Integer] frames above the caller to skip.
        # @return [String, nil] "path:line" of the first application frame, nil when none.
        def find(skip = 1)
          frames(skip + 1, 1).first
        end

        # The application's part of the current stack: its frames, innermost first, with library
        # frames left out (the walk stops at `limit` frames, or {DEPTH} frames of any kind).
        # @param skip [Integer] frames above the caller to skip.
        # @param limit [Integer] most frames to return.
        # @return [Array<String>] "path:line:in `method'" ("path:line" for the first), may be empty.
        def frames(skip = 1, limit = 1)
          found = []
          start = skip + 1
          while start < DEPTH && (batch = caller_locations(start, BATCH))
            batch.each do |location|
              shown = shown_path(location.absolute_path || location.path) or next
              found << (found.empty? ? "#{shown}:#{location.lineno}" : "#{shown}:#{location.lineno}:in `#{location.label}'")
              return found if found.size >= limit
            end
            start += BATCH
          end
          found
        end

        # @param path [String] a frame's file.
        # @return [Boolean] whether the file is application code.
        def app?(path)
          !shown_path(path).nil?
        end

        # @return [Integer] how many paths are remembered now (at most {CACHE_LIMIT}).
        def cached_paths
          @shown.size
        end

        private

        # The path as shown in a call site, nil for library code; remembered per path.
        def shown_path(path)
          shown = @shown.fetch(path, false)
          return shown unless shown == false
          @shown.clear if @shown.size >= CACHE_LIMIT
          @shown[path] = @library.match?(path) ? nil : path.delete_prefix(@root).freeze
        end
      end
    end
  end
end
