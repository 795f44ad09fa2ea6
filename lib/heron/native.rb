# frozen_string_literal: true

require "fileutils"
require "rbconfig"

module Heron
  # Loads Heron's C extensions (lib/heron/heron_ext.so, the parser; lib/heron/profiler_ext.so,
  # the profiler's hot path). An installed gem has them, built by `gem install` or by Bundler from
  # a git source. A source checkout used through Bundler's `path:` does not: Bundler never
  # compiles path gems. There, the first require compiles the missing one in place (under a lock,
  # so workers or parallel test processes build it once) and says so on stderr; without a
  # compiler it raises a LoadError that says what to install and what to run.
  module Native
    LIB_DIR = __dir__
    ROOT = File.expand_path("../..", __dir__)
    # Extension name → its source directory.
    SOURCES = { "heron_ext" => "ext/heron", "profiler_ext" => "ext/heron_profiler" }.freeze

    class << self
      # Requires an extension, compiling it first in a source checkout that lacks it.
      # @param name [String] "heron_ext" or "profiler_ext".
      # @return [void]
      # @raise [LoadError] when it is missing and cannot be compiled.
      def load(name)
        require File.join(LIB_DIR, name)
      rescue LoadError
        raise unless buildable?(name)
        compile(name)
        require File.join(LIB_DIR, name)
      end

      # @return [Boolean] whether the extension is missing from a checkout that has its source
      #   (an installed gem whose extension failed to build is left to fail as it is).
      def buildable?(name)
        File.file?(File.join(ROOT, SOURCES.fetch(name), "extconf.rb")) && !File.exist?(library(name))
      end

      # @return [String] where the compiled library goes.
      def library(name)
        File.join(LIB_DIR, "#{name}.#{RbConfig::CONFIG['DLEXT']}")
      end

      private

      # Builds the extension in tmp/native/NAME and moves the library into lib/heron.
      def compile(name)
        build_dir = File.join(ROOT, "tmp/native", name)
        FileUtils.mkdir_p(build_dir)
        File.open(File.join(build_dir, ".lock"), File::RDWR | File::CREAT, 0o644) do |lock|
          lock.flock(File::LOCK_EX)
          build(name, build_dir) unless File.exist?(library(name))
        end
      rescue SystemCallError => e
        raise LoadError, failure(name, "#{e.class}: #{e.message}")
      end

      def build(name, build_dir)
        source = File.join(ROOT, SOURCES.fetch(name))
        $stderr.puts("heron: compiling the C extension #{name} in #{source} (first use of this checkout; once)")
        run(name, [RbConfig.ruby, File.join(source, "extconf.rb")], build_dir)
        run(name, [ENV["MAKE"] || RbConfig::CONFIG["MAKE"] || "make"], build_dir)
        File.rename(File.join(build_dir, File.basename(library(name))), library(name))
      end

      def run(name, argv, build_dir)
        output = IO.popen(argv, chdir: build_dir, err: %i[child out], &:read)
        raise LoadError, failure(name, output) unless $?.success?
      rescue SystemCallError => e
        raise LoadError, failure(name, "#{argv.first}: #{e.message}")
      end

      def failure(name, output)
        <<~TEXT
          heron: the C extension #{name} is not built and compiling it failed.
          Heron needs a C compiler, make and Ruby's headers (Debian/Ubuntu: apt-get install build-essential ruby-dev);
          then it compiles itself on the next start, or run `bundle exec rake compile` in #{ROOT}.
          #{output.to_s.lines.last(15).join}
        TEXT
      end
    end
  end
end
