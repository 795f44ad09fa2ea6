# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "heron/control/process_title"

class ControlProcessTitleTest < Minitest::Test
  def test_title_with_tag_and_addresses_as_ps_shows_it
    assert_equal "heron master [api] http://0.0.0.0:9292", in_child(tag: "api", role: "master", addresses: ["http://0.0.0.0:9292"])
  end

  def test_the_tag_defaults_to_the_directory_name
    dir = File.join(Dir.mktmpdir("heron-title"), "shop")
    Dir.mkdir(dir)
    assert_equal "heron worker 3 [shop]", Dir.chdir(dir) { in_child(tag: nil, role: "worker 3", addresses: []) }
  end

  private

  # Sets the title in a forked child and reads it back from /proc, as ps does.
  def in_child(tag:, role:, addresses:)
    reader, writer = IO.pipe
    pid = fork do
      Heron::Control::ProcessTitle.set(role, Heron::Configuration.new(tag: tag), addresses)
      writer.puts("set")
      sleep
    end
    writer.close
    reader.gets
    File.read("/proc/#{pid}/cmdline").delete("\0").strip
  ensure
    Process.kill("KILL", pid) if pid
    Process.wait(pid) if pid
  end
end
