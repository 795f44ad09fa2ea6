# frozen_string_literal: true

require "test_helper"

# The naming rule (docs/design.md): every file under each gem's lib/ (heron's, heron-profiler's,
# heron-attack's) defines the constant its path spells, `lib/heron/server/reactor_thread.rb` →
# `Heron::Server::ReactorThread`, so a newcomer finds any class from its name alone. Read from the
# source text: nesting by `class`/`module` indentation.
class LayoutTest < Minitest::Test
  ROOT = File.expand_path("../..", __dir__)
  LIBS = %w[lib heron-profiler/lib heron-attack/lib].map { |dir| File.join(ROOT, dir) }.freeze

  def test_every_lib_file_defines_the_constant_its_path_names
    misses = LIBS.flat_map { |lib| Dir[File.join(lib, "**/*.rb")].sort.filter_map { |file| miss(lib, file) } }
    assert_empty misses, "files whose path does not name a constant they define"
  end

  def test_each_gem_has_its_lib_tests_gemspec_readme_and_changelog
    { "heron" => ".", "heron-profiler" => "heron-profiler", "heron-attack" => "heron-attack" }.each do |name, dir|
      %W[#{name}.gemspec README.md CHANGELOG.md LICENSE lib test].each do |entry|
        assert File.exist?(File.join(ROOT, dir, entry)), "#{dir}/#{entry} is missing"
      end
    end
  end

  def test_the_three_gems_share_one_version
    versions = %w[heron.gemspec heron-profiler/heron-profiler.gemspec heron-attack/heron-attack.gemspec].map do |path|
      Gem::Specification.load(File.join(ROOT, path)).version.to_s
    end
    assert_equal [Heron::VERSION] * 3, versions
  end

  def test_the_rule_catches_a_misplaced_class
    source = "module Heron\n  class ResponseWriter\n  end\nend\n"
    refute_includes constants(source).map { |name| key(name.split("::")) }, key(%w[heron response writer])
  end

  private

  def key(parts) = parts.map { |part| part.downcase.delete("_") }

  # @return [String, nil] "path: constants found" when the file misses its path's constant.
  def miss(lib, file)
    expected = key(file.delete_prefix("#{lib}/").delete_suffix(".rb").split("/"))
    found = constants(File.read(file))
    "#{file.delete_prefix("#{ROOT}/")}: #{found.join(', ')}" unless found.any? { |name| key(name.split("::")) == expected }
  end

  # Constant paths a file defines: nested class/module lines and `NAME = ...` assignments.
  def constants(source)
    stack = []
    source.each_line.with_object([]) do |line, found|
      next unless (m = line.match(/^(\s*)(?:(?:class|module) ([A-Z]\w*)|([A-Z]\w*) = )/))
      depth = m[1].size / 2
      stack = stack.first(depth) + [m[2] || m[3]]
      found << stack.join("::")
    end
  end
end
