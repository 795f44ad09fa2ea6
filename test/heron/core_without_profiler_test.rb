# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "open3"
require "fileutils"

# The core knows no plug-in: with lib/heron/profiler/ (and the profiler's extension) gone, Heron
# still loads and serves, and serving loads nothing of the profiler.
class HeronCoreWithoutProfilerTest < Minitest::Test
  LIB = File.expand_path("../../lib", __dir__)

  SCRIPT = <<~'RUBY'
    require "heron"
    require "net/http"
    app = ->(_env) { [200, { "content-type" => "text/plain" }, ["served"]] }
    config = Heron::Configuration.new(binds: ["tcp://127.0.0.1:0"], environment: "production", log_io: File.open(File::NULL, "w"))
    server = Heron::Server.new(app, config).bind
    thread = Thread.new { server.run }
    server.wait_until_running(5)
    body = Net::HTTP.get(URI("http://127.0.0.1:#{server.bound_ports.first}/"))
    server.stop(graceful: false)
    thread.join
    puts body, $LOADED_FEATURES.grep(%r{heron/profiler|profiler_ext}).size, defined?(Heron::Profiler).inspect
  RUBY

  def test_the_server_runs_without_the_profiler_directory
    Dir.mktmpdir do |dir|
      FileUtils.cp_r(LIB, dir)
      FileUtils.rm_rf([File.join(dir, "lib/heron/profiler"), File.join(dir, "lib/heron/profiler.rb"),
                       File.join(dir, "lib/heron/profiler_ext.so")])
      clean = { "RUBYOPT" => nil, "RUBYLIB" => nil, "BUNDLE_GEMFILE" => nil, "BUNDLE_BIN_PATH" => nil }
      out, status = Open3.capture2e(clean, Gem.ruby, "-I", File.join(dir, "lib"), "-e", SCRIPT)
      assert status.success?, out
      assert_equal "served\n0\nnil\n", out # no profiler file, and no Heron::Profiler from C
    end
  end
end
