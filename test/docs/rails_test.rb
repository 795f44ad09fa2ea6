# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "open3"

# docs/rails.md's Gemfile lines resolve with Bundler today: the `path:` one against this
# checkout, offline, and the `git:` one with its URL pointed at this checkout's repository
# (github.com is not reachable from every test machine; RubyGems.org is needed for Heron's
# dependencies, so the test skips when Bundler cannot reach it). A bare `gem "heron"` would
# resolve to nothing, or to someone else's gem, so the page must not offer one.
class RailsDocsTest < Minitest::Test
  ROOT = File.expand_path("../..", __dir__)
  GEM_LINE = /^#?\s*gem "heron"(?<options>.*)$/

  def gem_lines
    text = File.read(File.join(ROOT, "docs/rails.md"))
    block = text[/```ruby\n# Gemfile.*?```/m] or flunk("docs/rails.md has no Gemfile block")
    block.to_enum(:scan, GEM_LINE).map { Regexp.last_match }
  end

  def test_no_bare_gem_line
    assert_equal [%(, git: "https://github.com/heron-rb/heron"), %(, path: "../heron")], gem_lines.map { |line| line[:options] }
  end

  def test_the_path_line_resolves_offline
    options = gem_lines.find { |line| line[:options].include?("path:") }[:options]
    lockfile = lock(options.sub(/path: "[^"]*"/, "path: #{ROOT.inspect}"), "--local")
    assert_match(/^PATH\n  remote: #{Regexp.escape(ROOT)}\n  specs:\n    heron \(\d/, lockfile)
  end

  def test_the_git_line_resolves
    options = gem_lines.find { |line| line[:options].include?("git:") }[:options]
    lockfile = lock(options.sub(/git: "[^"]*"/, "git: #{ROOT.inspect}"))
    assert_match(/^GIT\n  remote: #{Regexp.escape(ROOT)}\n  revision: \h{40}\n  specs:\n    heron \(\d/, lockfile)
  end

  private

  # Writes a Gemfile with the line and runs `bundle lock`, outside this repository's bundle.
  # @return [String] the lockfile.
  def lock(options, *flags)
    Dir.mktmpdir("heron-gemfile") do |dir|
      File.write(File.join(dir, "Gemfile"), %(source "https://rubygems.org"\ngem "heron"#{options}\n))
      output, status = Bundler.with_unbundled_env { Open3.capture2e("bundle", "lock", *flags, chdir: dir) }
      skip "Bundler cannot reach rubygems.org: #{output.lines.last}" if !status.success? && output.match?(/Could not (reach|fetch)|network|getaddrinfo/i)
      assert status.success?, output
      File.read(File.join(dir, "Gemfile.lock"))
    end
  end
end
