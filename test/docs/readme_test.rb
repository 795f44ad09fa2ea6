# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "open3"

# Runs the README's shell blocks that are safe to run, as written, against the real demo app.
# A block is run when the line before its ```sh fence is `<!-- readme-test: ... -->`; the
# marker may list what the block must print: `<!-- readme-test: prints "a", "b" -->`. Blocks
# without it (installing, starting servers, load tests) are only shown. `localhost:9292`, where
# `bin/run` serves the demo, is pointed at the demo this test starts on a free port.
class ReadmeTest < Minitest::Test
  ROOT = File.expand_path("../..", __dir__)
  MARKER = /^<!-- readme-test:(?<note>.*?)-->\n```sh\n(?<script>.*?)^```$/m

  def test_the_marked_shell_blocks_run_as_written
    blocks = File.read(File.join(ROOT, "README.md")).to_enum(:scan, MARKER).map { Regexp.last_match }
    assert_operator blocks.size, :>=, 2, "no README blocks are marked to run"
    Dir.mktmpdir("heron-readme") do |dir|
      with_demo(dir) do |port|
        blocks.each { |block| assert_block_runs(block, port, dir) }
      end
    end
  end

  private

  def assert_block_runs(block, port, dir)
    script = block[:script].gsub("localhost:9292", "127.0.0.1:#{port}")
    output, status = Open3.capture2e("bash", "-euo", "pipefail", "-c", script, chdir: dir)
    assert status.success?, "README block failed:\n#{block[:script]}\n#{output}"
    block[:note].scan(/"([^"]*)"/).flatten.each { |text| assert_includes output, text, block[:script] }
  end

  def with_demo(dir)
    env = { "HERON_DEMO_DB" => File.join(dir, "demo.sqlite3"), "HERON_DEMO_USERS" => "50" }
    output, status = Open3.capture2e(env, RbConfig.ruby, "examples/demo/db/setup.rb", chdir: ROOT)
    assert status.success?, output
    log = File.join(dir, "heron.log")
    pid = Process.spawn(env, RbConfig.ruby, "exe/heron", "-e", "production", "-b", "tcp://127.0.0.1:0",
                        "examples/demo/config.ru", chdir: ROOT, %i[out err] => log, pgroup: true)
    yield wait_for_port(log, pid)
  ensure
    if pid
      Process.kill("TERM", -pid) rescue nil
      wait_exit(pid)
    end
  end
end
