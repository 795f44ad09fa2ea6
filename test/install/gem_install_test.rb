# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "rubygems/package"
require_relative "../support/install_helper"

# `gem build` and `gem install` as a user does, offline: the built gem goes into an empty
# GEM_HOME (its dependencies come from the gems already installed on the machine, through
# GEM_PATH), the C extension compiles during the install, and the installed `heron` executable
# serves a request without the repository on the load path.
class GemInstallTest < Minitest::Test
  include InstallHelper

  APP = <<~'RUBY'
    run lambda { |env|
      ext = $LOADED_FEATURES.grep(/heron_ext/).first
      [200, { "content-type" => "text/plain" }, ["installed #{Heron::VERSION} #{ext}"]]
    }
  RUBY

  def test_built_gem_installs_into_an_empty_gem_home_and_serves
    Dir.mktmpdir("heron-gem") do |dir|
      gem_home = File.join(dir, "gems")
      run!({}, "gem", "build", File.join(ROOT, "heron.gemspec"), "-o", File.join(dir, "heron.gem"), chdir: ROOT)
      env = { "GEM_HOME" => gem_home, "GEM_PATH" => [gem_home, *Gem.path].join(File::PATH_SEPARATOR) }
      output = run!(env, "gem", "install", "--local", "--no-document", File.join(dir, "heron.gem"), chdir: dir)
      assert_match(/Building native extensions/, output)
      assert_packaged(File.join(gem_home, "gems/heron-#{Heron::VERSION}"), Gem::Package.new(File.join(dir, "heron.gem")).spec)
      File.write(File.join(dir, "config.ru"), APP)
      port = free_port
      argv = [RbConfig.ruby, File.join(gem_home, "bin/heron"), "-b", "tcp://127.0.0.1:#{port}", "config.ru"]
      serving(env, argv, chdir: dir) do |log|
        body = get_when_up(port, "/", log).body
        assert_match(%r{\Ainstalled #{Regexp.escape(Heron::VERSION)} #{Regexp.escape(gem_home)}/.*heron_ext\.so\z}, body)
      end
    end
  end

  private

  # What a published gem must carry: the license text, the changelog, the project's links, MFA for
  # publishing, and dependency ranges that admit current async and io-event releases; and what it
  # must not: the profiler and the load generator, which are gems of their own.
  def assert_packaged(installed, spec)
    assert_equal ["ext/heron/extconf.rb"], spec.extensions
    assert_empty spec.files.grep(%r{\Alib/heron/(profiler|attack)|heron_profiler|\Aheron-}), "the server gem carries another gem's files"
    assert File.file?(File.join(installed, "LICENSE")), "LICENSE is not in the gem"
    assert File.file?(File.join(installed, "CHANGELOG.md")), "CHANGELOG.md is not in the gem"
    assert_equal "true", spec.metadata["rubygems_mfa_required"]
    %w[homepage_uri source_code_uri changelog_uri bug_tracker_uri].each { |key| assert_match(%r{\Ahttps://}, spec.metadata[key].to_s, key) }
    async = spec.runtime_dependencies.find { |dep| dep.name == "async" }
    assert async.match?("async", "2.46.0"), "async #{async.requirement} excludes current releases"
    refute async.match?("async", "3.0.0")
    refute async.match?("async", "2.23.0")
    refute spec.runtime_dependencies.any? { |dep| dep.name == "io-event" }
    refute spec.runtime_dependencies.find { |dep| dep.name == "rackup" }.match?("rackup", "3.0.0")
  end
end
