# frozen_string_literal: true

require "fileutils"
require "rbconfig"

module Heron
  # Loads a gem's C extension from its lib/heron (heron's heron_ext.so, the parser;
  # heron-profiler's profiler_ext.so, the profiler's hot path). An installed gem has it, built by `gem install` or by Bundler from
  # a git source. A source checkout used through Bundler's `path:` does not: Bundler never
  # compiles path gems. There, the first require compiles the missing one in place (under a lock,
  # so workers or parallel test processes build it once) and says so on stderr; without a
  # compiler it raises a LoadError that says what to install and what to run.
  module Native
    ROOT = File.expand_path("../..", __dir__)
    # Extension name → its source directory, under its gem's root.
    SOURCES = { "heron_ext" => "ext/heron", "profiler_ext" => "ext/heron_profiler" }.freeze # profiler_ext: heron-profiler's

    class << self
      # Requires an extension, compiling it first in a source checkout that lacks it.
      # @param name [String] "heron_ext" or "profiler_ext".
      # @param root [String] the directory of the gem that owns it (its lib/ and ext/).
      # @return [void]
      # @raise [LoadError] when it is missing and cannot be compiled.
      def load(name, root: ROOT)
        require library(name, root)
      rescue LoadError
        raise unless buildable?(name, root)
        compile(name, root)
        require library(name, root)
      end

      # @return [Boolean] whether the extension is missing from a checkout that has its source
      #   (an installed gem whose extension failed to build is left to fail as it is).
      def buildable?(name, root = ROOT)
        File.file?(File.join(root, SOURCES.fetch(name), "extconf.rb")) && !File.exist?(library(name, root))
      end

      # @return [String] where the compiled library goes.
      def library(name, root = ROOT)
        File.join(root, "lib/heron", "#{name}.#{RbConfig::CONFIG['DLEXT']}")
      end

      private

      # Builds the extension in ROOT/tmp/native/NAME and moves the library into ROOT/lib/heron.
      def compile(name, root)
        build_dir = File.join(root, "tmp/native", name)
        FileUtils.mkdir_p(build_dir)
        File.open(File.join(build_dir, ".lock"), File::RDWR | File::CREAT, 0o644) do |lock|
          lock.flock(File::LOCK_EX)
          build(name, root, build_dir) unless File.exist?(library(name, root))
        end
      rescue SystemCallError => e
        raise LoadError, failure(name, root, "#{e.class}: #{e.message}")
      end

      def build(name, root, build_dir)
        source = File.join(root, SOURCES.fetch(name))
        $stderr.puts("heron: compiling the C extension #{name} in #{source} (first use of this checkout; once)")
        run(name, root, [RbConfig.ruby, File.join(source, "extconf.rb")], build_dir)
        run(name, root, [ENV["MAKE"] || RbConfig::CONFIG["MAKE"] || "make"], build_dir)
        File.rename(File.join(build_dir, File.basename(library(name, root))), library(name, root))
      end

      def run(name, root, argv, build_dir)
        output = IO.popen(argv, chdir: build_dir, err: %i[child out], &:read)
        raise LoadError, failure(name, root, output) unless $?.success?
      rescue SystemCallError => e
        raise LoadError, failure(name, root, "#{argv.first}: #{e.message}")
      end

      def failure(name, root, output)
        <<~TEXT
          heron: the C extension #{name} is not built and compiling it failed.
          Heron needs a C compiler, make and Ruby's headers (Debian/Ubuntu: apt-get install build-essential ruby-dev);
          then it compiles itself on the next start, or run `bundle exec rake compile` in #{root}.
          #{output.to_s.lines.last(15).join}
        TEXT
      end
    end
  end
end
