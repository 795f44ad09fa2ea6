# frozen_string_literal: true

require "fileutils"
require "open3"

# A PATH that holds only what a fresh Debian machine has: the programs of the packages of
# priority "required" (what a minimal image such as debian:12 is made of: coreutils, bash, sed,
# grep, findutils, apt...), plus the packages a test names (Ruby, Bundler, a C compiler) and the
# executables of the installed gems (where `bundle install` puts them, /usr/local/bin, which a
# fresh machine's PATH has). Each program is a symlink in one directory; a test adds stand-ins
# (a recording apt-get) beside them.
module FreshMachine
  # Debian's packages for `ruby`, `bundle`, `gcc` (with `as` and `ld`) and `make`.
  RUBY_BUNDLER_AND_C = %w[ruby ruby3.1 ruby-bundler gcc gcc-12 cpp cpp-12 binutils binutils-x86-64-linux-gnu make].freeze

  # Fills `dir` with symlinks to the programs of the required packages and of `packages`,
  # leaving out `without` (programs a test replaces with stand-ins).
  # @return [String] dir, to be the whole PATH.
  def fresh_machine_path(dir, packages: RUBY_BUNDLER_AND_C, without: %w[apt-get])
    FileUtils.mkdir_p(dir)
    (programs(required_packages + packages) + gem_executables).each do |path|
      name = File.basename(path)
      link = File.join(dir, name)
      File.symlink(path, link) unless without.include?(name) || File.exist?(link)
    end
    dir
  end

  # Writes an executable shell script `name` into `dir`, in place of the symlink to the machine's
  # own program of that name if there is one (writing through it would replace, say, /usr/bin/id).
  # @return [String] its path.
  def stand_in(dir, name, script)
    path = File.join(dir, name)
    FileUtils.rm_f(path)
    File.write(path, "#!/bin/sh\n#{script}\n")
    File.chmod(0o755, path)
    path
  end

  private

  def required_packages
    out, = Open3.capture2("dpkg-query", "-W", "-f", "${Priority} ${Package}\n")
    out.lines.map(&:split).select { |priority, _| priority == "required" }.map(&:last)
  end

  def gem_executables
    Gem::Specification.flat_map { |spec| spec.executables.map { |name| File.join(Gem.bindir, name) } }.select { |path| File.file?(path) }
  end

  def programs(packages)
    out, = Open3.capture2("dpkg", "-L", *packages, err: File::NULL)
    out.lines.map(&:chomp).select do |path|
      path.match?(%r{\A(/usr)?/s?bin/[^/]+\z}) && File.file?(path) && File.executable?(path)
    end
  end
end
