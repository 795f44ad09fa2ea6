# frozen_string_literal: true

require "test_helper"
require "tempfile"
require "heron/restart"

# Heron::Restart::CommandLine reads a process's argv as Linux records it (/proc/PID/cmdline:
# arguments separated by NUL bytes), the command a hot restart under rackup runs again.
class RestartCommandLineTest < Minitest::Test
  CommandLine = Heron::Restart::CommandLine

  def test_this_process_is_read_from_proc
    skip "no /proc" unless File.readable?("/proc/self/cmdline")
    out = IO.popen([RbConfig.ruby, "-I", File.expand_path("../../../lib", __dir__), "-e",
                    'require "heron/restart"; ARGV.clear; print Heron::Restart::CommandLine.original.last(4).join(" ")',
                    "--", "-s", "heron", "config.ru"], &:read)
    assert_equal "-- -s heron config.ru", out, "the argv rackup had before it parsed ARGV"
  end

  def test_arguments_are_split_on_nul_bytes
    assert_equal ["ruby3.1", "/usr/local/bin/rackup", "-s", "heron", "-p", "9292", "config.ru"],
                 read("ruby3.1\0/usr/local/bin/rackup\0-s\0heron\0-p\0009292\0config.ru\0")
  end

  # `bundle exec` loading a Ruby executable sets the process title to "PROGRAM ARGS", one string.
  def test_a_title_set_by_bundle_exec_is_split_on_spaces_and_run_with_this_ruby
    program = Tempfile.create("rackup") { |file| file.path }
    File.write(program, "#!/usr/bin/env ruby\n")
    assert_equal [RbConfig.ruby, program, "-s", "heron", "-p", "9292"], read("#{program} -s heron -p 9292\0\0\0")
  ensure
    File.delete(program) if program && File.exist?(program)
  end

  def test_an_unreadable_file_falls_back_to_the_program_and_argv
    assert_equal [RbConfig.ruby, $PROGRAM_NAME, *ARGV], CommandLine.read("/nonexistent/cmdline")
  end

  def test_rails_restart_command_is_split_into_words
    assert_equal %w[bin/rails server -u heron -p 3000 --restart], CommandLine.words("bin/rails server -u heron -p 3000 --restart")
    assert_equal %w[ruby exe/heron], CommandLine.words(%w[ruby exe/heron])
  end

  private

  def read(bytes)
    Tempfile.create("cmdline") do |file|
      file.binmode
      file.write(bytes)
      file.flush
      CommandLine.read(file.path)
    end
  end
end
