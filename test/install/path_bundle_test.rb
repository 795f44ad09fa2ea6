# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require_relative "../support/install_helper"

# An app's bundle with Heron from a `path:` checkout (which Bundler does not compile: Heron
# compiles its extension on first require), heron-profiler from the same checkout in the
# Gemfile's development group (so, in development, every request is profiled, and the
# profiler's extension compiles on first use too), beside the newest async-http that installs on
# this Ruby, resolved offline from the installed gems. The app fans out with async-http inside a
# request: three requests back to the same server, each of which answers only once all three
# are in flight at the same time (a handshake, not a timing).
class PathBundleTest < Minitest::Test
  include InstallHelper

  GEMFILE = <<~'RUBY'
    source "https://rubygems.org"
    gem "heron", path: "../heron"
    group :development do
      gem "heron-profiler", path: "../heron/heron-profiler"
    end
    gem "async-http"
  RUBY

  APP = <<~'RUBY'
    require "async/barrier"
    require "async/http/internet"
    arrived = 0
    fan_out = lambda do |port|
      internet = Async::HTTP::Internet.new
      barrier = Async::Barrier.new
      tasks = 3.times.map { |i| barrier.async { internet.get("http://127.0.0.1:#{port}/part?#{i}").read } }
      barrier.wait
      tasks.map(&:wait).join(",")
    ensure
      internet&.close
    end
    part = lambda do |env|
      arrived += 1
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 20
      sleep 0.01 until arrived >= 3 || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      arrived >= 3 ? "part #{env['QUERY_STRING']}" : "part #{env['QUERY_STRING']} alone"
    end
    run lambda { |env|
      body = env["PATH_INFO"] == "/part" ? part.(env) : fan_out.(env["SERVER_PORT"])
      [200, { "content-type" => "text/plain" }, [body]]
    }
  RUBY

  def test_path_checkout_with_async_http_resolves_compiles_and_fans_out
    Dir.mktmpdir("heron-path") do |dir|
      checkout = copy_checkout(File.join(dir, "heron"))
      app = File.join(dir, "app")
      Dir.mkdir(app)
      File.write(File.join(app, "Gemfile"), GEMFILE)
      File.write(File.join(app, "config.ru"), APP)
      env = { "BUNDLE_GEMFILE" => File.join(app, "Gemfile") }
      run!(env, "bundle", "lock", "--local", chdir: app)
      assert_equal newest_async_http, locked(app, "async-http")
      port = free_port
      serving(env, %W[bundle exec heron -b tcp://127.0.0.1:#{port} config.ru], chdir: app) do |log|
        response = get_when_up(port, "/", log, timeout: 300) # it compiles both extensions first: minutes beside a CPU hog
        assert_equal "part 0,part 1,part 2", response.body
        assert_match(/\Aapp;dur=[\d.]+, .*heron;desc="[^"]+"\z/, response["server-timing"], "profiled by default in development")
        assert_match(/compiling the C extension heron_ext in #{Regexp.escape(checkout)}\/ext\/heron /, File.read(log))
        assert_match(%r{compiling the C extension profiler_ext in #{Regexp.escape(checkout)}/heron-profiler/ext/heron_profiler }, File.read(log))
      end
    end
  end

  private

  # @return [String] the async-http version the repository's own (unpinned) lock resolved.
  def newest_async_http
    locked(ROOT, "async-http")
  end

  def locked(dir, name)
    File.read(File.join(dir, "Gemfile.lock"))[/^    #{Regexp.escape(name)} \(([^)]+)\)$/, 1]
  end
end
