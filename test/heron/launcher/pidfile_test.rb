# frozen_string_literal: true

require "test_helper"

class PidfileTest < Minitest::Test
  def test_written_with_this_pid_and_deleted_only_while_it_names_this_process
    Dir.mktmpdir do |dir|
      path = File.join(dir, "heron.pid")
      pidfile = Heron::Launcher::Pidfile.new(path)
      pidfile.write
      assert_equal "#{Process.pid}\n", File.read(path)
      File.write(path, "#{Process.pid + 1}\n") # a hot restart's new master took it over
      pidfile.delete
      assert File.exist?(path), "another process's pidfile is left alone"
      pidfile.write
      pidfile.delete
      refute File.exist?(path)
      assert_empty Dir.children(dir), "no temporary file left behind"
    end
  end
end
