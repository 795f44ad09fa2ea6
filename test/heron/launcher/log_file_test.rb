# frozen_string_literal: true

require "test_helper"

class LogFileTest < Minitest::Test
  def test_reopen_follows_the_path_after_a_rename
    Dir.mktmpdir do |dir|
      path = File.join(dir, "heron.log")
      config = Heron::Configuration.new
      log_file = Heron::Launcher::LogFile.new(path).attach(config)
      assert_same config.log_io, config.error_io
      config.log_io.write("before\n")
      File.rename(path, "#{path}.1")
      log_file.reopen
      config.log_io.write("after\n")
      assert_equal ["before\n", "after\n"], [File.read("#{path}.1"), File.read(path)]
    end
  end
end
