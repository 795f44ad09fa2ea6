# frozen_string_literal: true

require "test_helper"
require "json"
require "tmpdir"
require "fileutils"
require "rubygems/package"
require_relative "../support/install_helper"
require_relative "../support/nginx_helper"

# heron-attack and heron-profiler built with `gem build` and installed as a user does, offline,
# each into an empty GEM_HOME (what else they need comes from the machine's gems through
# GEM_PATH, where neither Heron gem is), then put to work: the load generator drives a real
# nginx, and the profiler measures a Rack app served by Puma.
class PluginGemsInstallTest < Minitest::Test
  include InstallHelper
  include NginxHelper

  PUMA_APP = <<~'RUBY'
    require "heron/profiler"
    app = lambda do |env|
      next [200, {}, [$LOADED_FEATURES.grep(%r{/heron/}).grep_v(%r{/heron-profiler-[^/]+/}).join("\n")]] if env["PATH_INFO"] == "/loaded"
      next [200, {}, [%w[async rack].select { |name| Gem.loaded_specs[name].full_gem_path.start_with?(ENV["GEM_HOME"]) }.join(" ")]] if env["PATH_INFO"] == "/deps"
      ext = $LOADED_FEATURES.grep(/profiler_ext/).first
      [200, { "content-type" => "text/plain" }, ["under #{Puma::Server.name} #{ext}"]]
    end
    run Heron::Profiler.wrap(app, profile_path: "/_profiler")
  RUBY

  # Then, with the server installed beside it, `heron attack` is the same load generator.
  def test_heron_attack_installs_alone_and_drives_nginx
    Dir.mktmpdir("heron-attack-gem") do |dir|
      env = gem_env(dir)
      install(env, dir, build(dir, "heron-attack/heron-attack.gemspec"))
      installed = run!(env, RbConfig.ruby, "-e", 'print Gem::Specification.map(&:name).grep(/\Aheron/).sort.join(",")', chdir: dir)
      assert_equal "heron-attack", installed, "heron-attack brought in no other Heron gem"
      with_nginx(dir, 'location / { return 200 "from nginx\n"; }') do |port|
        assert_drives(env, dir, port, File.join(env["GEM_HOME"], "bin/heron-attack"))
        install(env, dir, build(dir, "heron.gemspec"))
        assert_drives(env, dir, port, File.join(env["GEM_HOME"], "bin/heron"), "attack")
      end
    end
  end

  # Alone: installed into an empty GEM_HOME that is its only gem path, with its runtime
  # dependencies from the machine's gem cache (.gem files beside it), no heron gem among them;
  # then served by the machine's Puma with that GEM_HOME first, loading its dependencies from
  # there and nothing of the server's files.
  def test_heron_profiler_installs_alone_and_profiles_a_puma_app
    Dir.mktmpdir("heron-profiler-gem") do |dir|
      env = gem_env(dir)
      gem = build(dir, "heron-profiler/heron-profiler.gemspec")
      cached = runtime_dependencies(Gem::Specification.load(File.join(ROOT, "heron-profiler/heron-profiler.gemspec")))
      cached.each { |spec| FileUtils.cp(spec.cache_file, dir) }
      output = install(env.merge("GEM_PATH" => env["GEM_HOME"]), dir, gem)
      assert_match(/Building native extensions/, output)
      installed = run!(env.merge("GEM_PATH" => env["GEM_HOME"]), RbConfig.ruby, "-e",
                       "print Gem::Specification.reject(&:default_gem?).map(&:name).sort.join(' ')", chdir: dir).split
      assert_equal ["heron-profiler"], installed.grep(/\Aheron/), "no other Heron gem"
      assert_empty %w[async io-event rack] - installed, "its dependencies, installed into its GEM_HOME"
      File.write(File.join(dir, "config.ru"), PUMA_APP)
      port = free_port
      puma = Gem::Specification.find_by_name("puma").bin_file("puma")
      serving(env, [RbConfig.ruby, puma, "-b", "tcp://127.0.0.1:#{port}", "-t", "2:2", "config.ru"], chdir: dir) do |log|
        response = get_when_up(port, "/hello", log)
        assert_match(%r{\Aunder Puma::Server #{Regexp.escape(env['GEM_HOME'])}/.*profiler_ext\.so\z}, response.body)
        id = response["server-timing"].to_s[/heron;desc="([^"]+)"/, 1]
        assert id, "no heron entry in server-timing: #{response.to_hash.inspect}"
        assert_match(/app;dur=\d/, response["server-timing"])
        record = JSON.parse(get_when_up(port, "/_profiler/requests/#{id}.json", log).body)["request"]
        assert_equal ["GET", "/hello", 200], record.values_at("method", "path", "status")
        loaded = get_when_up(port, "/loaded", log).body
        assert_equal "", loaded, "files of the heron gem loaded under Puma"
        assert_equal "async rack", get_when_up(port, "/deps", log).body, "its dependencies came from its GEM_HOME"
      end
    end
  end

  private

  # Sends 400 requests at 200/s with the installed command; every one is answered 200.
  def assert_drives(env, dir, port, *command)
    json = File.join(dir, "report.json")
    File.delete(json) if File.exist?(json)
    run!(env, RbConfig.ruby, *command, "http://127.0.0.1:#{port}/", "--rate", "200", "-n", "400", "--json", json, chdir: dir)
    report = JSON.parse(File.read(json))
    assert_equal [400, { "200" => 400 }], [report["requests"]["sent"], report["status_codes"]], command.last
  end

  # @return [Array<Gem::Specification>] the installed gems a gemspec's runtime dependencies
  #   resolve to, recursively (default gems left out: every Ruby has them), each with its .gem in
  #   the machine's cache.
  def runtime_dependencies(spec, found = {})
    spec.runtime_dependencies.each do |dependency|
      next if found.key?(dependency.name) || default_gem?(dependency.name)
      resolved = dependency.to_spec
      next if resolved.default_gem?
      found[dependency.name] = resolved
      runtime_dependencies(resolved, found)
    end
    found.values
  end

  # A gem Ruby itself ships (logger on Ruby 3.1): found by its spec in Ruby's own directory, since
  # the core's suite runs in a bundle without the plugin gems, where it is not in the bundle.
  def default_gem?(name)
    !Dir.glob(File.join(Gem.default_specifications_dir, "#{name}-[0-9]*.gemspec")).empty?
  end

  def gem_env(dir)
    gem_home = File.join(dir, "gems")
    { "GEM_HOME" => gem_home, "GEM_PATH" => [gem_home, *Gem.path].join(File::PATH_SEPARATOR) }
  end

  # @return [String] the built gem's path, in dir.
  def build(dir, gemspec)
    spec = Gem::Specification.load(File.join(ROOT, gemspec))
    path = File.join(dir, "#{spec.name}-#{spec.version}.gem")
    run!({}, "gem", "build", File.basename(gemspec), "-o", path, chdir: File.join(ROOT, File.dirname(gemspec)))
    path
  end

  def install(env, dir, gem)
    run!(env, "gem", "install", "--local", "--no-document", gem, chdir: dir)
  end
end
