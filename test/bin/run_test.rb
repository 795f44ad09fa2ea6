# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "open3"
require "net/http"
require_relative "../support/fresh_machine"

# bin/run on a fresh machine with only Ruby, Bundler and a C compiler added (no apt-get, no
# clang, no curl): in a copy of this checkout with no compiled extension and no demo database,
# it compiles the extensions, seeds the database, then serves the demo.
class RunTest < Minitest::Test
  include FreshMachine

  def test_needs_only_ruby_bundler_and_a_c_compiler
    Dir.mktmpdir("heron-run") do |dir|
      bin = fresh_machine_path(File.join(dir, "bin"))
      calls = File.join(dir, "apt-get.calls")
      stand_in(bin, "apt-get", %(echo "$*" >> #{calls}; exit 1))
      checkout = copy_checkout(File.join(dir, "checkout"))
      env = { "PATH" => bin, "HERON_DEMO_USERS" => "20" }
      out, status = setup_only(env, checkout, File.join(dir, "setup.log"))
      assert status.success?, out
      assert_match(/^run: compiling the C extensions$/, out)
      assert_match(/^demo db: .* seeded with 20 users/, out)
      assert_equal [true, true], %w[lib/heron/heron_ext heron-profiler/lib/heron/profiler_ext].map { |so| File.exist?(File.join(checkout, "#{so}.so")) }
      refute File.exist?(calls), "apt-get was not asked for anything"
      assert_serves_the_demo(env, checkout, dir)
    end
  end

  private

  # The files git tracks (and new ones not ignored): no build products, no database.
  def copy_checkout(to)
    files, status = Open3.capture2("git", "-C", ProcessHelper::ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    assert status.success?, "git ls-files failed"
    files.split("\0").each do |file|
      source = File.join(ProcessHelper::ROOT, file)
      next unless File.file?(source)
      FileUtils.mkdir_p(File.dirname(File.join(to, file)))
      FileUtils.cp(source, File.join(to, file), preserve: true)
    end
    to
  end

  # Runs `bin/run --setup-only`; compiling on a loaded machine can take minutes, so the bound
  # is long, but a bin/run that goes on to serve fails at once.
  # @return [Array(String, Process::Status)]
  def setup_only(env, checkout, log)
    pid = Bundler.with_unbundled_env do
      Process.spawn(env, File.join(checkout, "bin/run"), "--setup-only", out: log, err: [:child, :out], pgroup: true)
    end
    (@spawned_groups ||= []) << pid
    status = eventually(timeout: 600) do
      flunk("bin/run --setup-only went on to serve:\n#{File.read(log)}") if File.read(log).include?("http://")
      Process.wait2(pid, Process::WNOHANG)&.last
    end
    [File.read(log), status]
  end

  def assert_serves_the_demo(env, checkout, dir)
    port = free_port
    log = File.join(dir, "run.log")
    pid = Bundler.with_unbundled_env do
      Process.spawn(env.merge("PORT" => port.to_s), File.join(checkout, "bin/run"), out: log, err: [:child, :out], pgroup: true)
    end
    (@spawned_groups ||= []) << pid
    response = eventually { Net::HTTP.get_response(URI("http://127.0.0.1:#{port}/")) rescue nil }
    assert_equal "200", response.code, File.read(log)
    Process.kill("TERM", -pid)
    assert wait_exit(pid), "bin/run's heron stops on TERM"
  end
end
